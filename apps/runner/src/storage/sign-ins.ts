import type { AccessRole, SignInStore, StoredSignIn } from '@x/approval-center';
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import type { Db } from './stores.js';

/**
 * The page's sign-ins kept in `runner.sessions` (only the SHA-256 of each id), shared by every
 * serve process of one database; a key's sign-in is joined to its live operator.
 */
export function sqlSignInStore(db: Db): SignInStore {
  return {
    async insert(signIn: StoredSignIn) {
      const { idHash, name, access, roles, signedInWith, credential, expiresAt } = signIn;
      await db.execute(sql`delete from runner.sessions where expires_at <= now()`);
      await db.execute(sql`insert into runner.sessions
          (id_hash, name, access, roles, signed_in_with, credential, expires_at)
        values (${idHash}, ${name}, ${access}, string_to_array(${roles.join(',')}, ','),
          ${signedInWith}, ${credential}, ${expiresAt.toISOString()}::timestamptz)`);
    },
    async find(idHash: string) {
      const result = await db.execute(sql`select s.name, s.access, s.roles,
          s.signed_in_with, s.credential, s.expires_at, o.key_id, o.roles as operator_roles
        from runner.sessions s
        left join runner.operators o on o.name = s.name and o.revoked_at is null
        where s.id_hash = ${idHash} and s.expires_at > now()`);
      const row = rowsOf(result)[0];
      if (!row) return undefined;
      const expires = row.expires_at;
      return {
        idHash,
        name: String(row.name),
        access: String(row.access) as AccessRole,
        roles: row.roles as string[],
        signedInWith: String(row.signed_in_with) as StoredSignIn['signedInWith'],
        credential: row.credential == null ? null : String(row.credential),
        expiresAt: expires instanceof Date ? expires : new Date(String(expires)),
        ...(row.key_id == null
          ? {}
          : { operator: { keyId: String(row.key_id), roles: row.operator_roles as string[] } }),
      };
    },
    async delete(idHash: string) {
      await db.execute(sql`delete from runner.sessions where id_hash = ${idHash}`);
    },
  };
}

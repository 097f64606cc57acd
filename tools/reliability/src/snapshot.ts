import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type postgres from 'postgres';

/** Every file under `dir` with a hash of its bytes: equal snapshots = nothing changed on disk. */
export async function folderSnapshot(dir: string): Promise<string> {
  const out: string[] = [];
  const walk = async (at: string, prefix: string): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(at)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(at, name);
      const info = await stat(path);
      if (info.isDirectory()) await walk(path, `${prefix}${name}/`);
      else {
        const hash = createHash('sha1')
          .update(await readFile(path))
          .digest('hex');
        out.push(`${prefix}${name}:${info.size}:${hash}`);
      }
    }
  };
  await walk(dir, '');
  return out.join('\n');
}

/** A hash of every row of the suite's tables: equal snapshots = nothing changed in the database. */
export async function databaseSnapshot(sql: postgres.Sql): Promise<string> {
  const [row] = await sql`
    select
      (select md5(coalesce(string_agg(p::text, '|' order by p.token), '')) from aura.paused_states p) as pauses,
      (select md5(coalesce(string_agg(s::text, '|' order by s.interaction_id), '')) from x_continuation.suspensions s) as continuations,
      (select md5(coalesce(string_agg(c::text, '|' order by c.thread_id), '')) from x_session.checkpoints c) as checkpoints`;
  return JSON.stringify(row);
}

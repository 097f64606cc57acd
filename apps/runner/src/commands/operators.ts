import { parseArgs } from 'node:util';
import { appendAuditEvent } from '@x/askuser';
import { usageError } from '../errors.js';
import type { Storage } from '../storage/index.js';
import type { OperatorStore } from '../storage/operators.js';
import { osUserName } from '../terminal/os-user.js';
import { plural } from '../terminal/output.js';
import { type Command, globalOptions, withStorage } from './command.js';

const USAGE =
  'operators add NAME [--role ROLE]... | operators list | operators revoke NAME | operators rotate NAME';

/** The audit log's events of operator management. */
type OperatorEvent = 'operator-added' | 'operator-revoked' | 'key-rotated';

/**
 * Makes a change to the operators and, when there is an audit key, records it as an
 * `app-event` naming the operator, their roles and who made it (the OS user, through the
 * CLI), in the same transaction: the change and its entry commit together or not at all.
 */
function recorded<T extends { roles: string[] }>(
  storage: Storage,
  event: OperatorEvent,
  name: string,
  change: (store: OperatorStore) => Promise<T>,
): Promise<T> {
  return storage.transaction(async (tx) => {
    const done = await change(storage.operators(tx));
    const key = storage.auditKey();
    if (key !== undefined) {
      const data = { event, name, roles: done.roles, by: osUserName(), channel: 'cli' };
      await appendAuditEvent(tx, data, { key, chain: 'operators' });
    }
    return done;
  });
}

/**
 * `runner operators add | list | revoke | rotate`: the people who sign in to `serve` with an
 * API key. A key is printed once, when it is made; only its hash is kept.
 */
export const operators: Command = async (ctx, args) => {
  const { values, positionals } = parseArgs({
    args,
    options: { ...globalOptions, role: { type: 'string', multiple: true } },
    allowPositionals: true,
  });
  const [action, name, ...extra] = positionals;
  if (!['add', 'list', 'revoke', 'rotate'].includes(action ?? '')) {
    throw usageError(`usage: runner ${USAGE}`);
  }
  if (extra.length) throw usageError(`unexpected "${extra.join(' ')}"; usage: runner ${USAGE}`);
  if (action !== 'add' && values.role) throw usageError('--role is for operators add');
  const needName = () => {
    if (!name) throw usageError(`operators ${action} needs a NAME; usage: runner ${USAGE}`);
    return name;
  };
  const keyNote = 'keep it now: it is shown only this once';
  return withStorage(ctx, async (storage) => {
    const store = storage.operators();
    switch (action) {
      case 'add': {
        const added = needName();
        const { roles, key } = await recorded(storage, 'operator-added', added, (operators) =>
          operators.add(added, values.role ?? []),
        );
        ctx.out.record(
          { type: 'operator-added', name, roles, key },
          `added operator ${name} (${roles.join(', ')}); their key, ${keyNote}:\n${key}`,
        );
        return 0;
      }
      case 'list': {
        if (name) throw usageError('operators list takes no NAME');
        const all = await store.list();
        for (const o of all) {
          const state = o.revokedAt ? `revoked ${o.revokedAt.toISOString()}` : 'live';
          ctx.out.record(
            {
              type: 'operator',
              name: o.name,
              roles: o.roles,
              createdAt: o.createdAt.toISOString(),
              keyCreatedAt: o.keyCreatedAt.toISOString(),
              revokedAt: o.revokedAt?.toISOString() ?? null,
            },
            `${o.name}  ${o.roles.join(',')}  ${state}  key of ${o.keyCreatedAt.toISOString()}`,
          );
        }
        if (!all.length) {
          ctx.out.note(
            `no operators: serve answers for one local operator without a key; add one with ${ctx.out.command('operators add NAME --role admin')}`,
          );
        } else ctx.out.note(plural(all.length, 'operator'));
        return 0;
      }
      case 'revoke': {
        const revoked = needName();
        await recorded(storage, 'operator-revoked', revoked, (operators) =>
          operators.revoke(revoked),
        );
        ctx.out.record(
          { type: 'operator-revoked', name },
          `revoked ${name}: their key no longer works`,
        );
        return 0;
      }
      case 'rotate': {
        const rotated = needName();
        const { key } = await recorded(storage, 'key-rotated', rotated, (operators) =>
          operators.rotate(rotated),
        );
        ctx.out.record(
          { type: 'operator-rotated', name, key },
          `new key for ${name} (the old one no longer works), ${keyNote}:\n${key}`,
        );
        return 0;
      }
      default:
        return 2;
    }
  });
};

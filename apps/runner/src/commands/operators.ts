import { parseArgs } from 'node:util';
import { plural } from '../cli/output.js';
import { usageError } from '../errors.js';
import { type Command, globalOptions, withStorage } from './command.js';

const USAGE =
  'operators add NAME [--role ROLE]... | operators list | operators revoke NAME | operators rotate NAME';

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
        const { roles, key } = await store.add(needName(), values.role ?? []);
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
      case 'revoke':
        await store.revoke(needName());
        ctx.out.record(
          { type: 'operator-revoked', name },
          `revoked ${name}: their key no longer works`,
        );
        return 0;
      case 'rotate': {
        const key = await store.rotate(needName());
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

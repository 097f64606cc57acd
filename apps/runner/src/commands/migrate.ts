import { parseArgs } from 'node:util';
import { migrateAll } from '../storage/index.js';
import { type Command, globalOptions, withStorage } from './command.js';

/** `runner migrate`: applies every package's migrations (idempotent). */
export const migrate: Command = async (ctx, args) => {
  parseArgs({ args, options: globalOptions });
  return withStorage(ctx, async (storage) => {
    await migrateAll(storage.db);
    ctx.out.record(
      { type: 'migrated', where: storage.where },
      `migrations applied in ${storage.where}`,
    );
    return 0;
  });
};

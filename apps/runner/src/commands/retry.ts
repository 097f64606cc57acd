import { parseArgs } from 'node:util';
import { assertSafeId } from '@x/continuation';
import { usageError } from '../errors.js';
import { retryRun } from '../executive/index.js';
import { type Command, globalOptions, withStorage } from './command.js';

/** `runner retry RUN`: makes a failed run ready again. */
export const retry: Command = async (ctx, args) => {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  const [runId] = positionals;
  if (!runId || positionals.length > 1)
    throw usageError(`retry needs one RUN id (see ${ctx.out.command('runs')})`);
  assertSafeId('run id', runId);
  return withStorage(ctx, async (storage) => {
    const run = await retryRun(storage, runId);
    ctx.out.record(
      { type: 'run-ready', runId, conversationId: run.conversationId },
      `run ${runId} (${run.conversationId}) is ready again; a running wake picks it up (or: ${ctx.out.command('wake --once')})`,
    );
    return 0;
  });
};

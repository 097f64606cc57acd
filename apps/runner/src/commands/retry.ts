import { parseArgs } from 'node:util';
import { assertSafeId, ContinuationError } from '@x/continuation';
import { RunnerError, usageError } from '../errors.js';
import { type Command, globalOptions, withStorage } from './command.js';

/** `runner retry RUN`: makes a failed run ready again. */
export const retry: Command = async (ctx, args) => {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  const [runId] = positionals;
  if (!runId || positionals.length > 1)
    throw usageError(`retry needs one RUN id (see ${ctx.out.command('runs')})`);
  assertSafeId('run id', runId);
  return withStorage(ctx, async (storage) => {
    const run = await storage
      .runs()
      .retry(runId)
      .catch((error: unknown) => {
        // A run that is not failed stands as someone else left it: a conflict, not bad usage.
        if (ContinuationError.hasCode(error, 'invalid'))
          throw new RunnerError('conflict', error.message, { cause: error });
        throw error;
      });
    ctx.out.record(
      { type: 'run-ready', runId, conversationId: run.conversationId },
      `run ${runId} (${run.conversationId}) is ready again; a running wake picks it up (or: ${ctx.out.command('wake --once')})`,
    );
    return 0;
  });
};

import { parseArgs } from 'node:util';
import { assertSafeId } from '@x/continuation';
import { notFoundError, usageError } from '../errors.js';
import { retryRun } from '../executive/index.js';
import { failureOf } from '../failure.js';
import { type Command, globalOptions, withStorage } from './command.js';

/** `runner retry RUN`: makes a failed run ready again. */
export const retry: Command = async (ctx, args) => {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  const [runId] = positionals;
  if (!runId || positionals.length > 1)
    throw usageError(`retry needs one RUN id (see ${ctx.out.command('runs')})`);
  assertSafeId('run id', runId);
  return withStorage(ctx, async (storage) => {
    const run = await retryRun(storage, runId).catch(async (error: unknown) => {
      if (failureOf(error) !== 'not_found') throw error;
      // A conversation id where a run id belongs: say so, and where its runs' ids are.
      const runs = await storage.runs().list({ conversationId: runId, limit: 1 });
      if (runs.length === 0) throw error;
      throw notFoundError(
        `no run "${runId}": ${runId} is a conversation id; retry takes a RUN id (${ctx.out.command(`runs --conversation ${runId}`)} lists its runs)`,
      );
    });
    ctx.out.record(
      { type: 'run-ready', runId, conversationId: run.conversationId },
      `run ${runId} (${run.conversationId}) is ready again; a running wake picks it up (or: ${ctx.out.command('wake --once')})`,
    );
    return 0;
  });
};

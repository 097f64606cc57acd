import { parseArgs } from 'node:util';
import { assertSafeId } from '@x/continuation';
import { usageError } from '../errors.js';
import { stopKnownConversation } from '../executive/index.js';
import { plural } from '../terminal/output.js';
import { type Command, globalOptions, withStorage } from './command.js';

/** `runner stop CONVERSATION`: closes its open questions and cancels its runs. */
export const stop: Command = async (ctx, args) => {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  const [conversationId] = positionals;
  if (!conversationId || positionals.length > 1) throw usageError('stop needs one CONVERSATION id');
  assertSafeId('conversation id', conversationId);
  return withStorage(ctx, async (storage) => {
    const closed = await stopKnownConversation(storage, conversationId);
    const nothing = closed.pauses + closed.continuations + closed.runs === 0;
    ctx.out.record(
      { type: 'stopped', conversationId, ...closed },
      nothing
        ? `${conversationId} had nothing open: no question waits and no run is in flight`
        : `stopped ${conversationId}: ${plural(closed.pauses, 'open question')} closed, ${plural(closed.runs, 'run')} cancelled`,
    );
    return 0;
  });
};

import { parseArgs } from 'node:util';
import { assertSafeId } from '@x/continuation';
import { usageError } from '../errors.js';
import { startRun } from '../executive/index.js';
import { shellQuote } from '../invocation.js';
import { modelFromId } from '../model/index.js';
import { plural } from '../output.js';
import { type Command, globalOptions, observer, report, withStorage } from './context.js';

function newId(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/** `runner exec GOAL`: an unattended run until it completes or waits on a person. */
export const exec: Command = async (ctx, args) => {
  const { values, positionals } = parseArgs({
    args,
    options: { ...globalOptions, conversation: { type: 'string' }, replace: { type: 'boolean' } },
    allowPositionals: true,
  });
  const goal = positionals.join(' ').trim();
  if (!goal) throw usageError('exec needs a GOAL, e.g. runner exec "Plan a trip"');
  if (values.conversation !== undefined) assertSafeId('--conversation', values.conversation);
  const conversationId = values.conversation ?? newId('c');
  const model = modelFromId(ctx.modelId);
  return withStorage(ctx, async (storage) => {
    const result = await startRun(
      storage,
      model,
      goal,
      conversationId,
      observer(ctx.out, { conversationId }),
      {
        replace: values.replace === true,
        onStopped: (stopped) => {
          const what =
            stopped.pauses > 0
              ? plural(stopped.pauses, 'open question')
              : stopped.runs > 0 && plural(stopped.runs, 'unfinished run');
          if (what) ctx.out.note(`stopped ${what} of ${conversationId} first`);
        },
        hints: {
          command: ctx.out.command,
          replace: ctx.out.command(
            `exec ${shellQuote(goal)} --conversation ${conversationId}${values.model === undefined ? '' : ` --model ${shellQuote(values.model)}`} --replace`,
          ),
        },
      },
    );
    report(ctx.out, result);
    return 0;
  });
};

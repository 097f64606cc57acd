import { parseArgs } from 'node:util';
import { assertSafeId } from '@x/continuation';
import { type Grant, grantsProblem } from '@x/executive';
import { usageError } from '../errors.js';
import { runnerPolicyVersions, startRun } from '../executive/index.js';
import { modelFromId } from '../model/index.js';
import { shellQuote } from '../terminal/invocation.js';
import { plural } from '../terminal/output.js';
import { observer } from '../terminal/turn-output.js';
import { type Command, type Context, globalOptions, withStorage } from './command.js';
import { report } from './run-report.js';

function newId(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/** The goal of `--goal-file PATH` (`-`: standard input), for a goal too long for a command line. */
async function goalFromFile(ctx: Context, file: string): Promise<string> {
  try {
    return await ctx.readInput(file);
  } catch (error) {
    throw usageError(
      `--goal-file ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
}

/** A `--pre-approve` scope: `TOOL`, or `TOOL={...}` with the arguments a covered call holds. */
function scopeOf(given: string): Grant {
  const at = given.indexOf('=');
  if (at < 0) return { tool: given.trim() };
  let parsed: unknown;
  try {
    parsed = JSON.parse(given.slice(at + 1));
  } catch {
    throw usageError(
      `--pre-approve ${given}: after TOOL= comes a JSON object, e.g. pay={"payee":"acme"}`,
    );
  }
  return { tool: given.slice(0, at).trim(), arguments: parsed as Record<string, unknown> };
}

/** `runner exec GOAL`: an unattended run until it completes or waits on a person. */
export const exec: Command = async (ctx, args) => {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...globalOptions,
      conversation: { type: 'string' },
      'goal-file': { type: 'string' },
      replace: { type: 'boolean' },
      requester: { type: 'string' },
      'pre-approve': { type: 'string', multiple: true },
    },
    allowPositionals: true,
  });
  const file = values['goal-file'];
  if (file !== undefined && positionals.length > 0)
    throw usageError('exec takes a GOAL or --goal-file PATH, not both');
  const goal = (file === undefined ? positionals.join(' ') : await goalFromFile(ctx, file)).trim();
  if (!goal && file !== undefined)
    throw usageError(`--goal-file ${file} holds no goal (it is empty)`);
  if (!goal) throw usageError('exec needs a GOAL, e.g. runner exec "Plan a trip"');
  if (values.conversation !== undefined) assertSafeId('--conversation', values.conversation);
  // Loaded before anything is said or written: a bad policy file refuses the run with its line.
  const policies = runnerPolicyVersions();
  const conversationId = values.conversation ?? newId('c');
  // A made-up id is the one handle on the conversation (show, stop, exec again): say it.
  if (values.conversation === undefined) ctx.out.note(`conversation ${conversationId}`);
  const requester = values.requester;
  if (requester !== undefined && (requester.trim() === '' || requester.length > 200))
    throw usageError('--requester takes a name of 1 to 200 characters');
  const preApproved = (values['pre-approve'] ?? []).map(scopeOf);
  const problem = grantsProblem(preApproved);
  if (problem) throw usageError(`--pre-approve: ${problem}`);
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
        fresh: values.conversation === undefined,
        ...(requester === undefined ? {} : { requester }),
        policies,
        preApproved,
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

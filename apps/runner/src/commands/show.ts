import { parseArgs } from 'node:util';
import type { PauseRecord } from '@x/askuser';
import type { RunRecord } from '@x/continuation-postgres';
import type { Message } from '@x/wire';
import { notFoundError, usageError } from '../errors.js';
import { messageText, runMessages, runOf } from '../executive/index.js';
import { type Command, globalOptions, withStorage } from './context.js';
import { describeRun } from './runs.js';

/** A run with its questions and transcript, as `show` prints it. */
interface RunStory {
  run: RunRecord;
  questions: PauseRecord[];
  /** Completed: the whole transcript; waiting or ready: the transcript up to the question. */
  messages: Message[] | null;
}

/** `runner show CONVERSATION`: each run with its outcome, attempts, questions and transcript. */
export const show: Command = async (ctx, args) => {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  const [conversationId] = positionals;
  if (!conversationId || positionals.length > 1) throw usageError('show needs one CONVERSATION id');
  return withStorage(ctx, async (storage) => {
    const runs = (await storage.runs().list({ conversationId, limit: 1_000 })).reverse();
    if (runs.length === 0)
      throw notFoundError(`no conversation ${conversationId}: no run of it is recorded`);
    const pauses = await storage.pauses().listForConversation(conversationId);
    for (const run of runs) {
      const story: RunStory = {
        run,
        questions: pauses.filter((p) => runOf(p) === run.runId),
        messages: await runMessages(storage, run),
      };
      if (ctx.out.json) {
        ctx.out.record({ type: 'run', ...story });
        continue;
      }
      const lines = [describeRun(run, ctx.out.command)];
      for (const q of story.questions) {
        const answer = q.answer
          ? `${q.answer.action}${q.answer.content ? ` "${q.answer.content}"` : ''}`
          : 'waiting for an answer';
        lines.push(`  ? ${q.question}  → ${answer}  (${q.token})`);
      }
      if (story.messages) {
        lines.push(
          `  transcript (${story.messages.length} message${story.messages.length === 1 ? '' : 's'}):`,
        );
        for (const m of story.messages) lines.push(`    ${m.role}: ${messageText(m)}`);
      }
      ctx.out.record({ type: 'run' }, lines.join('\n'));
    }
    return 0;
  });
};

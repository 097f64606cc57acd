import { parseArgs } from 'node:util';
import type { PauseRecord } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import type { RunRecord } from '@x/continuation-postgres';
import type { Message } from '@x/wire';
import { notFoundError, usageError } from '../errors.js';
import type { Storage } from '../storage.js';
import { type Command, globalOptions, withStorage } from './context.js';
import { describeRun } from './runs.js';

/** A run with its questions and transcript, as `show` prints it. */
interface RunStory {
  run: RunRecord;
  questions: PauseRecord[];
  /** Completed: the whole transcript; waiting or ready: the transcript up to the question. */
  messages: Message[] | null;
}

function runOf(pause: PauseRecord): string | undefined {
  const run = (pause.resumeContext as { run?: unknown } | null)?.run;
  return typeof run === 'string' ? run : undefined;
}

async function storyOf(storage: Storage, run: RunRecord, questions: PauseRecord[]) {
  let messages: Message[] | null = null;
  if (run.status === 'completed') messages = (await storage.runs().transcript(run.runId)) ?? null;
  else if (run.interactionId && run.status !== 'cancelled') {
    try {
      messages = (await storage.continuations().load(run.interactionId)).messages ?? null;
    } catch (error) {
      if (!ContinuationError.is(error)) throw error;
    }
  }
  return { run, questions, messages };
}

function textOf(message: Message): string {
  return message.content
    .map((block) => {
      switch (block.type) {
        case 'text':
          return block.text;
        case 'tool_use':
          return `[${block.name} ${JSON.stringify(block.input)}]`;
        case 'tool_result':
          return `[result: ${typeof block.content === 'string' ? block.content : JSON.stringify(block.content)}]`;
        default:
          return `[${block.type}]`;
      }
    })
    .join(' ');
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
      const story: RunStory = await storyOf(
        storage,
        run,
        pauses.filter((p) => runOf(p) === run.runId),
      );
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
        for (const m of story.messages) lines.push(`    ${m.role}: ${textOf(m)}`);
      }
      ctx.out.record({ type: 'run' }, lines.join('\n'));
    }
    return 0;
  });
};

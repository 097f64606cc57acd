import { parseArgs } from 'node:util';
import type { PauseRecord } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import type { RunRecord } from '@x/continuation-postgres';
import type { Message } from '@x/wire';
import { notFoundError, usageError } from '../errors.js';
import { readDelegation } from '../executive/delegate.js';
import type { ResumeContext } from '../executive/index.js';
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

function answerOf(q: PauseRecord): string {
  return q.answer
    ? `${q.answer.action}${q.answer.content ? ` "${q.answer.content}"` : ''}`
    : 'waiting for an answer';
}

/**
 * The worker runs of a run's delegate calls, as a tree: each worker with its sub-task, its
 * state (finished with its report, or waiting), its questions and answers and its messages.
 */
async function delegationLines(storage: Storage, questions: PauseRecord[]): Promise<string[]> {
  const lines: string[] = [];
  const parents = new Set(
    questions.map((q) => (q.resumeContext as ResumeContext | null)?.parent).filter(Boolean),
  );
  for (const parent of parents as Set<string>) {
    const read = await readDelegation(storage, parent);
    if (!read) continue;
    const { delegation } = read;
    lines.push(`  delegate ${delegation.toolCallId} (${delegation.workers.length} workers):`);
    for (const worker of delegation.workers) {
      const state = worker.report !== undefined ? `finished: ${worker.report}` : 'waiting';
      lines.push(`    ${worker.id} ${worker.task} — ${state}`);
      for (const q of questions.filter(
        (q) =>
          q.proxiedFromChildId === worker.id &&
          (q.resumeContext as ResumeContext | null)?.parent === parent,
      )) {
        lines.push(`      ? ${q.question}  → ${answerOf(q)}  (${q.token})`);
      }
      for (const m of worker.window) lines.push(`      ${m.role}: ${textOf(m)}`);
    }
  }
  return lines;
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
      const lines = [describeRun(run)];
      const own = story.questions.filter((q) => !q.proxiedFromChildId);
      for (const q of own) lines.push(`  ? ${q.question}  → ${answerOf(q)}  (${q.token})`);
      lines.push(...(await delegationLines(storage, story.questions)));
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

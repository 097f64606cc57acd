import { parseArgs } from 'node:util';
import type { PauseRecord } from '@x/askuser';
import { assertSafeId } from '@x/continuation';
import type { RunRecord } from '@x/continuation-postgres';
import type { Delegation } from '@x/executive';
import { readDelegation } from '@x/executive';
import type { Message } from '@x/wire';
import { notFoundError, usageError } from '../errors.js';
import {
  deadlineText,
  howAnswered,
  messageText,
  type ResumeContext,
  runMessages,
  runOf,
} from '../executive/index.js';
import type { Storage } from '../storage/index.js';
import { type Command, globalOptions, withStorage } from './command.js';
import { describeRun } from './runs.js';

/** A run with its questions and transcript, as `show` prints it. */
interface RunStory {
  run: RunRecord;
  questions: PauseRecord[];
  /** Completed: the whole transcript; waiting or ready: the transcript up to the question. */
  messages: Message[] | null;
}

function answerOf(q: PauseRecord): string {
  if (q.answer && q.expiredAt) return howAnswered({ ...q, answer: q.answer, answeredBy: null });
  if (q.answer) return `${q.answer.action}${q.answer.content ? ` "${q.answer.content}"` : ''}`;
  return q.deadline
    ? `waiting for an answer, ${deadlineText(q.deadline.at)}, then ${q.deadline.answer.action}`
    : 'waiting for an answer';
}

/** The delegate calls of a run whose workers asked: each with its parent continuation. */
async function delegationsOf(storage: Storage, questions: PauseRecord[]) {
  const parents = new Set<string>();
  for (const q of questions) {
    const parent = (q.resumeContext as ResumeContext | null)?.parent;
    if (parent) parents.add(parent);
  }
  const found: Array<{ parent: string; delegation: Delegation }> = [];
  for (const parent of parents) {
    const read = await readDelegation(storage, parent);
    if (read) found.push({ parent, delegation: read.delegation });
  }
  return found;
}

/**
 * The worker runs of a run's delegate calls, as a tree: each worker with its sub-task, its
 * state (finished with its report, or waiting), its questions and answers and its messages.
 */
function delegationLines(
  delegations: Awaited<ReturnType<typeof delegationsOf>>,
  questions: PauseRecord[],
): string[] {
  const lines: string[] = [];
  for (const { parent, delegation } of delegations) {
    lines.push(`  delegate ${delegation.toolCallId} (${delegation.workers.length} workers):`);
    for (const worker of delegation.workers) {
      const state = worker.report !== undefined ? `finished: ${worker.report}` : 'waiting';
      lines.push(`    ${worker.id} ${worker.task} — ${state}`);
      for (const q of questions) {
        const context = q.resumeContext as ResumeContext | null;
        if (q.proxiedFromChildId !== worker.id || context?.parent !== parent) continue;
        lines.push(`      ? ${q.question}  → ${answerOf(q)}  (${q.token})`);
      }
      for (const m of worker.window) lines.push(`      ${m.role}: ${messageText(m)}`);
    }
  }
  return lines;
}

/** `runner show CONVERSATION`: each run with its outcome, attempts, questions and transcript. */
export const show: Command = async (ctx, args) => {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  const [conversationId] = positionals;
  if (!conversationId || positionals.length > 1) throw usageError('show needs one CONVERSATION id');
  assertSafeId('conversation id', conversationId);
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
      const delegations = await delegationsOf(storage, story.questions);
      if (ctx.out.json) {
        const workers = delegations.map(({ delegation }) => ({
          toolCallId: delegation.toolCallId,
          workers: delegation.workers.map((w) => ({
            id: w.id,
            task: w.task,
            report: w.report ?? null,
            messages: w.window,
          })),
        }));
        ctx.out.record({ type: 'run', ...story, delegations: workers });
        continue;
      }
      const lines = [describeRun(run, ctx.out.command)];
      const own = story.questions.filter((q) => !q.proxiedFromChildId);
      for (const q of own) lines.push(`  ? ${q.question}  → ${answerOf(q)}  (${q.token})`);
      lines.push(...delegationLines(delegations, story.questions));
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

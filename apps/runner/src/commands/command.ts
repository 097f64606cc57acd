import type { TurnObserver } from '../agent/turn.js';
import { type Output, plural } from '../cli/output.js';
import type { RunResult } from '../executive/index.js';
import type { ModelRetry } from '../model/index.js';
import type { Storage } from '../storage/index.js';

/** The options every command takes. */
export const globalOptions = {
  data: { type: 'string' },
  model: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** What a command gets from the CLI. */
export interface Context {
  out: Output;
  dataDir: string;
  modelId: string;
  command: string;
  /** Opens the storage (embedded default or DATABASE_URL), migrated. */
  open(): Promise<Storage>;
}

/** A command: parses its own arguments, returns the exit code. */
export type Command = (ctx: Context, args: string[]) => Promise<number>;

/** Runs `fn` with an open storage, closing it afterwards. */
export async function withStorage<T>(
  ctx: Context,
  fn: (storage: Storage) => Promise<T>,
): Promise<T> {
  const storage = await ctx.open();
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}

/** Prints a running turn's events, tagged with `extra` in JSON mode. */
export function observer(out: Output, extra: Record<string, unknown> = {}): TurnObserver {
  return {
    event: (event) => out.event(out.json ? { ...event, ...extra } : event),
    modelCall: () => out.record({ type: 'model-call', ...extra }, undefined),
    modelRetry: (retry) => modelRetried(out, retry, extra),
  };
}

/**
 * Marks a retried model call: a `model-retry` event, and a line for people, so that a
 * reader drops the text the failed attempt streamed before it.
 */
export function modelRetried(
  out: Output,
  { attempt, reason, waitMs }: ModelRetry,
  extra: Record<string, unknown> = {},
): void {
  out.record(
    { type: 'model-retry', attempt, reason, retryInMs: waitMs, ...extra },
    `  ↻ model call attempt ${attempt} failed (${reason}); the text above is void, trying again`,
  );
}

/** How a worker's question is named to the operator: its source thread and sub-task. */
export function workerLabel(worker: string, conversationId: string, task: string): string {
  return `worker ${worker} of conversation ${conversationId} (via delegate): ${task}`;
}

type Waiting = Extract<RunResult, { status: 'waiting' }>;

/** A question's numbered options, one per line, and the command that answers it. */
function howToAnswer(
  out: Output,
  q: { token: string; options: string[] | null },
  indent: string,
): { options: string; command: string; others: string } {
  const listed = q.options?.length
    ? `\n${q.options.map((o, i) => `${indent}${i + 1}) ${o}`).join('\n')}`
    : '';
  const how = q.options?.length ? '--option N' : '--accept "..."';
  // The other answers, without the one the command already shows.
  const others = `${q.options?.length ? '--accept TEXT, ' : ''}--decline [TEXT], --cancel`;
  return { options: listed, command: out.command(`answer ${q.token} ${how}`), others };
}

/** The `run-waiting` event of a run that waits on one question or on its workers' questions. */
function waitingEvent(result: Waiting): { type: string } & Record<string, unknown> {
  const { runId, conversationId, token, question, options, questions } = result;
  return {
    type: 'run-waiting',
    status: 'waiting',
    runId,
    conversationId,
    token,
    question,
    options,
    ...(questions ? { questions } : {}),
  };
}

function reportDelegated(out: Output, result: Waiting): void {
  const questions = result.questions ?? [];
  const lines = questions.map((q) => {
    const { options, command } = howToAnswer(out, q, '    ');
    return `\n[${workerLabel(q.worker, result.conversationId, q.task)}]\n? ${q.question}${options}\n  answer: ${command}`;
  });
  out.record(
    waitingEvent(result),
    `${lines.join('\n')}\nwaiting on ${plural(questions.length, 'worker question')} (answer in any order, or together with ${out.command('answer --batch FILE')})`,
  );
}

/** Prints where a run stands after a turn: completed, waiting (with how to answer), cancelled. */
export function report(out: Output, result: RunResult): void {
  switch (result.status) {
    case 'completed':
      out.record(
        {
          type: 'run-completed',
          runId: result.runId,
          conversationId: result.conversationId,
          messages: result.messages,
        },
        `\n✓ completed (conversation ${result.conversationId}, run ${result.runId})`,
      );
      break;
    case 'waiting': {
      if (result.questions) {
        reportDelegated(out, result);
        break;
      }
      const { options, command, others } = howToAnswer(out, result, '  ');
      out.record(
        waitingEvent(result),
        `\n? ${result.question}${options}\nwaiting — token ${result.token}\n  answer: ${command}  (or ${others})`,
      );
      break;
    }
    case 'cancelled':
      out.record(
        { type: 'run-cancelled', runId: result.runId, conversationId: result.conversationId },
        `✗ cancelled (conversation ${result.conversationId})`,
      );
      break;
  }
}

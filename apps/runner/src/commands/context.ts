import type { TurnObserver } from '../agent.js';
import type { RunResult } from '../executive/index.js';
import type { ModelRetry } from '../model/index.js';
import { type Output, plural } from '../output.js';
import type { Storage } from '../storage.js';

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

function reportDelegated(out: Output, result: Extract<RunResult, { status: 'waiting' }>): void {
  const questions = result.questions ?? [];
  const lines = questions.map((q) => {
    const options = q.options?.length
      ? `\n${q.options.map((o, i) => `    ${i + 1}) ${o}`).join('\n')}`
      : '';
    const how = q.options?.length ? '--option N' : '--accept "..."';
    return `\n[${workerLabel(q.worker, result.conversationId, q.task)}]\n? ${q.question}${options}\n  answer: ${out.command(`answer ${q.token} ${how}`)}`;
  });
  out.record(
    {
      type: 'run-waiting',
      status: 'waiting',
      runId: result.runId,
      conversationId: result.conversationId,
      token: result.token,
      question: result.question,
      options: result.options,
      questions,
    },
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
      const options = result.options?.length
        ? `\n${result.options.map((o, i) => `  ${i + 1}) ${o}`).join('\n')}`
        : '';
      const how = result.options?.length ? '--option N' : '--accept "..."';
      out.record(
        {
          type: 'run-waiting',
          status: 'waiting',
          runId: result.runId,
          conversationId: result.conversationId,
          token: result.token,
          question: result.question,
          options: result.options,
        },
        `\n? ${result.question}${options}\nwaiting — token ${result.token}\n  answer: ${out.command(`answer ${result.token} ${how}`)}  (or --accept TEXT, --decline [TEXT], --cancel)`,
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

import type { PauseRecord } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import type { RunRecord } from '@x/continuation-postgres';
import type { Message } from '@x/wire';
import type { ExecutiveDatabase, ExecutiveStorage } from './storage.js';

/** The run a question of the executive belongs to (kept in its resume context), if any. */
export function runOf(pause: Pick<PauseRecord, 'resumeContext'>): string | undefined {
  const run = (pause.resumeContext as { run?: unknown } | null)?.run;
  return typeof run === 'string' ? run : undefined;
}

/**
 * What a run's transcript holds so far: the whole transcript once completed; up to its
 * latest question while it waits, is ready or failed; null when cancelled or when its
 * continuation is gone. Reads inside `tx` when given.
 */
export async function runMessages<Tx = ExecutiveDatabase>(
  storage: Pick<ExecutiveStorage<Tx>, 'runs' | 'continuations'>,
  run: RunRecord,
  tx?: Tx,
): Promise<Message[] | null> {
  if (run.status === 'completed') return (await storage.runs(tx).transcript(run.runId)) ?? null;
  if (!run.interactionId || run.status === 'cancelled') return null;
  try {
    return (await storage.continuations(tx).load(run.interactionId)).messages ?? null;
  } catch (error) {
    if (!ContinuationError.is(error)) throw error;
    return null;
  }
}

/** One message as a line of text: its text, tool calls and tool results in brackets. */
export function messageText(message: Message): string {
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

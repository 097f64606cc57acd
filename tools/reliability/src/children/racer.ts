// One racer of the cross-process races: waits for a task over IPC, runs it at once, and
// answers `won`, `lost` (the package's typed losing error) or `error: ...` (anything else).
import { AskUserError, AskUserStore, type ResumeAnswer } from '@x/askuser';
import { ContinuationError, type ContinuationStore, resolve } from '@x/continuation';
import { FileContinuationStore } from '@x/continuation/file';
import { PostgresContinuationStore } from '@x/continuation-postgres';
import { type CheckpointStore, SessionError } from '@x/session';
import { FileCheckpointStore } from '@x/session/file';
import { PostgresCheckpointStore } from '@x/session-postgres';
import { toolResult } from '@x/wire';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { checkpointAt } from '../fixtures.js';

/** A task sent by the parent. */
export type RaceTask =
  | { op: 'markResolved' | 'resolve'; id: string }
  | { op: 'markResumed'; token: string; answer: ResumeAnswer }
  | { op: 'put'; thread: string; revision: number; seed: number };

const [kind, where] = process.argv.slice(2);
const client = kind === 'pg' ? postgres(where!, { max: 1, onnotice: () => {} }) : undefined;
const db = client ? drizzle({ client }) : undefined;
const continuations: ContinuationStore = db
  ? new PostgresContinuationStore(db)
  : new FileContinuationStore(`${where}/continuations`);
const checkpoints: CheckpointStore = db
  ? new PostgresCheckpointStore(db)
  : new FileCheckpointStore(`${where}/checkpoints`);
const pauses = db ? new AskUserStore(db) : undefined;

async function run(task: RaceTask): Promise<void> {
  switch (task.op) {
    case 'markResolved':
      return continuations.markResolved(task.id);
    case 'resolve': {
      const s = await continuations.load(task.id);
      await resolve(continuations, s, toolResult(s.toolUseId, `answer from ${process.pid}`));
      return;
    }
    case 'markResumed':
      if (!pauses) throw new Error('markResumed needs the pg racer');
      await pauses.markResumed(task.token, task.answer);
      return;
    case 'put':
      await checkpoints.put(task.thread, checkpointAt(task.seed), {
        expectedRevision: task.revision,
      });
      return;
  }
}

function lost(error: unknown): boolean {
  return (
    ContinuationError.hasCode(error, 'already_resolved') ||
    SessionError.hasCode(error, 'conflict') ||
    AskUserError.hasCode(error, 'not_found')
  );
}

if (client) await client`select 1`; // connect before the first race
process.on('message', (task: RaceTask) => {
  run(task).then(
    () => process.send?.({ outcome: 'won' }),
    (error: unknown) =>
      process.send?.({
        outcome: lost(error) ? 'lost' : `error: ${(error as Error)?.stack ?? String(error)}`,
      }),
  );
});
process.send?.({ outcome: 'ready' });
process.on('disconnect', () => {
  void client?.end({ timeout: 1 });
  process.exit(0);
});

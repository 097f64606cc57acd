// A writer that saves in a loop until it is SIGKILLed: every save moves each record one
// version on (continuation: `turns + 1`; checkpoint: `counter + 1` at the read revision).
// Usage: crash-writer <continuation | continuation-postgres | session> <folder or url> <ids>
import type { ContinuationStore } from '@x/continuation';
import { FileContinuationStore } from '@x/continuation/file';
import { PostgresContinuationStore } from '@x/continuation-postgres';
import { FileCheckpointStore } from '@x/session/file';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { checkpointAt, counterOf, suspensionAt, turnsOf } from '../fixtures.js';

const [mode, dir, idList] = process.argv.slice(2);
const ids = (idList ?? '').split(',');

async function continuationPass(store: ContinuationStore): Promise<void> {
  for (const id of ids) {
    const turns = turnsOf(await store.load(id));
    if (typeof turns === 'string') throw new Error(`${id}: ${turns}`);
    await store.save(suspensionAt(id, turns + 1));
  }
}

async function checkpointPass(store: FileCheckpointStore): Promise<void> {
  for (const id of ids) {
    const stored = await store.get(id);
    if (!stored) throw new Error(`${id}: no checkpoint`);
    const n = counterOf(stored.checkpoint);
    if (typeof n === 'string') throw new Error(`${id}: ${n}`);
    await store.put(id, checkpointAt(n + 1), { expectedRevision: stored.revision });
  }
}

function continuationStore(): ContinuationStore {
  if (mode === 'continuation') return new FileContinuationStore(dir!);
  return new PostgresContinuationStore(
    drizzle({ client: postgres(dir!, { max: 1, onnotice: () => {} }) }),
  );
}

const pass =
  mode === 'session'
    ? (
        (store) => () =>
          checkpointPass(store)
      )(new FileCheckpointStore(dir!))
    : (
        (store) => () =>
          continuationPass(store)
      )(continuationStore());

await pass();
process.send?.('ready');
for (;;) await pass();

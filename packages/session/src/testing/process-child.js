// A child process of the CheckpointStore conformance suite. It builds the adapter's store
// with the author's module (argv: module URL, JSON arguments), then runs what the parent
// sends: a race of get → put at the revision read, or writes until it is killed.
// Plain JavaScript, so it runs under `node` from source and dist alike.
import { codeOf, send, storeFromArgs } from './child-store.js';

/**
 * The parent's sample checkpoint, marked with who wrote it and when.
 * @param {{ runtimeState: Record<string, unknown> }} checkpoint
 * @param {string} writer
 * @param {number} attempt
 */
function marked(checkpoint, writer, attempt) {
  return {
    ...checkpoint,
    runtimeState: { ...checkpoint.runtimeState, writer, attempt, padding: 'x'.repeat(2000) },
  };
}

/** @param {{ threadId: string, writer: string, attempts: number, checkpoint: any }} message */
async function race({ threadId, writer, attempts, checkpoint }) {
  const wins = [];
  const losses = [];
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      const current = await store.get(threadId);
      const expected = current?.revision ?? null;
      const revision = await store.put(threadId, marked(checkpoint, writer, attempt), {
        expectedRevision: expected,
      });
      wins.push({ expected, revision, attempt });
    } catch (error) {
      losses.push(codeOf(error, '@x/session.SessionError'));
    }
  }
  send({ wins, losses });
}

/** @param {{ threadId: string, writer: string, checkpoint: any }} message */
async function writeForever({ threadId, writer, checkpoint }) {
  for (let attempt = 0, announced = false; ; attempt++) {
    const current = await store.get(threadId);
    await store.put(threadId, marked(checkpoint, writer, attempt), {
      expectedRevision: current?.revision ?? null,
    });
    if (!announced) {
      announced = true;
      send({ ready: true });
    }
  }
}

const store = await storeFromArgs();
process.on('message', (/** @type {any} */ message) => {
  const run = message.op === 'race' ? race(message) : writeForever(message);
  run.catch((error) => {
    send({ type: 'fatal', message: `${message.op} failed: ${String(error?.stack ?? error)}` });
    process.exit(1);
  });
});
send({ type: 'ready' });

// A child process of the CheckpointStore conformance suite. It builds the adapter's store
// with the author's module (argv: module URL, JSON arguments), then runs what the parent
// sends: a race of get → put at the revision read, or writes until it is killed.
// Plain JavaScript with no imports of its own, so it runs under `node` from source and dist.

const ERROR_MARKER = Symbol.for('@x/session.SessionError');
const [moduleHref, argsJson] = process.argv.slice(2);

/** @param {unknown} message */
function send(message) {
  process.send?.(message);
}

/** @param {unknown} error */
function codeOf(error) {
  if (typeof error === 'object' && error !== null && ERROR_MARKER in error) {
    return /** @type {{ code: string }} */ (error).code;
  }
  const e = /** @type {{ name?: string, message?: string } | null} */ (error);
  return `untyped ${e?.name ?? typeof error}: ${e?.message ?? String(error)}`;
}

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
      losses.push(codeOf(error));
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

/** @type {{ get(id: string): Promise<any>, put(id: string, c: unknown, o: unknown): Promise<number> }} */
let store;
try {
  const module = await import(moduleHref);
  const build = typeof module.default === 'function' ? module.default : module.createStore;
  if (typeof build !== 'function') {
    throw new Error(
      `${moduleHref} exports no function (default or createStore) that builds a store`,
    );
  }
  store = await build(JSON.parse(argsJson ?? 'null'));
} catch (error) {
  send({ type: 'fatal', message: String(/** @type {Error} */ (error)?.stack ?? error) });
  process.exit(1);
}

process.on('disconnect', () => process.exit(0));
process.on('message', (/** @type {any} */ message) => {
  const run = message.op === 'race' ? race(message) : writeForever(message);
  run.catch((error) => {
    send({ type: 'fatal', message: `${message.op} failed: ${String(error?.stack ?? error)}` });
    process.exit(1);
  });
});
send({ type: 'ready' });

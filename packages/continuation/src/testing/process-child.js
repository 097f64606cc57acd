// A child process of the ContinuationStore conformance suite. It builds the adapter's store
// with the author's module (argv: module URL, JSON arguments), then runs each operation the
// parent sends and answers with its outcome: 'ok' or the ContinuationError code.
// Plain JavaScript, so it runs under `node` from source and dist alike.
import { codeOf, send, storeFromArgs } from './child-store.js';

/** @param {() => Promise<unknown>} run */
async function outcome(run) {
  try {
    await run();
    return 'ok';
  } catch (error) {
    return codeOf(error, '@x/continuation.ContinuationError');
  }
}

/** @param {Record<string, unknown>} json a Suspension sent as JSON (createdAt as a string) */
function revive(json) {
  return { ...json, createdAt: new Date(String(json.createdAt)) };
}

/**
 * A suspension of `interactionId` whose transcript has `turns` earlier exchanges and says so
 * in its tool input, so the parent can tell a whole record from a torn one.
 * @param {string} interactionId
 * @param {number} turns
 * @param {number} version
 * @param {string} runId
 */
function growing(interactionId, turns, version, runId) {
  const toolUseId = `toolu_${interactionId}`;
  const input = { turns };
  const assistant = {
    role: 'assistant',
    content: [{ type: 'tool_use', id: toolUseId, name: 'ask_user', input }],
  };
  const messages = [];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: 'user',
      content: [{ type: 'text', text: `turn ${i} ${'x'.repeat(200)}` }],
    });
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `reply ${i}` }] });
  }
  messages.push({ role: 'user', content: [{ type: 'text', text: 'go on' }] }, assistant);
  return {
    version,
    runId,
    interactionId,
    toolUseId,
    toolName: 'ask_user',
    toolInput: input,
    assistant,
    messages,
    createdAt: new Date(),
    resolved: false,
  };
}

/**
 * Saves ever larger suspensions of `ids` until killed; answers once the first pass is saved.
 * @param {{ ids: string[], start: number, version: number, runId: string }} message
 */
async function saveForever({ ids, start, version, runId }) {
  for (let turns = start, first = true; ; turns += 25, first = false) {
    for (const id of ids) await store.save(growing(id, turns, version, runId));
    if (first) send({ ready: true });
  }
}

const store = await storeFromArgs();
process.on('message', async (/** @type {any} */ message) => {
  switch (message.op) {
    case 'markResolved':
      send({ outcome: await outcome(() => store.markResolved(message.id)) });
      break;
    case 'load+markResolved':
      send({
        outcome: await outcome(async () => {
          await store.load(message.id);
          await store.markResolved(message.id);
        }),
      });
      break;
    case 'save':
      send({ outcome: await outcome(() => store.save(revive(message.suspension))) });
      break;
    case 'saveForever':
      saveForever(message).catch((error) => {
        send({ type: 'fatal', message: `save failed: ${String(error?.stack ?? error)}` });
        process.exit(1);
      });
      break;
  }
});
send({ type: 'ready' });

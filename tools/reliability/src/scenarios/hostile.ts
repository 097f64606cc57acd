import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AskUserError,
  AskUserStore,
  migrate as migrateAskUser,
  type ResumeAnswer,
} from '@x/askuser';
import {
  ContinuationError,
  createSuspension,
  DEFAULT_MAX_RECORD_BYTES,
  encodeSuspension,
  resumeMessages,
  SUSPENSION_VERSION,
} from '@x/continuation';
import { FileContinuationStore, sessionDir } from '@x/continuation/file';
import {
  migrate as migrateContinuations,
  PostgresContinuationStore,
} from '@x/continuation-postgres';
import { type CheckpointStore, SessionError } from '@x/session';
import { FileCheckpointStore } from '@x/session/file';
import { migrate as migrateCheckpoints, PostgresCheckpointStore } from '@x/session-postgres';
import { type Message, parseMessage, parseMessages, toolResult, WireError } from '@x/wire';
import { drizzle } from 'drizzle-orm/postgres-js';
import fc from 'fast-check';
import { checkpointAt, suspensionAt } from '../fixtures.js';
import { knob } from '../knobs.js';
import type { Tally } from '../report.js';
import { client, createDatabase } from '../server.js';
import { databaseSnapshot, folderSnapshot } from '../snapshot.js';

const RUNS = knob('RELIABILITY_FC_RUNS', 100, 40);
/** An error of @x/askuser, by its static guard. */
const isAskUserError = (e: unknown): boolean => AskUserError.is(e);

type Guard = (e: unknown) => boolean;

/**
 * Runs `op`; it must throw an error that `guard` accepts (the package's typed error) and
 * `snapshot` must be the same before and after. Throws (for fast-check) when not.
 */
async function refused(
  tally: Tally,
  label: string,
  op: () => unknown,
  guard: Guard,
  snapshot: () => Promise<string>,
): Promise<void> {
  tally.cases++;
  const before = await snapshot();
  let thrown: unknown;
  let threw = false;
  try {
    await op();
  } catch (error) {
    thrown = error;
    threw = true;
  }
  if (!threw) throw new Error(`${label}: accepted, expected a typed error`);
  if (!guard(thrown)) {
    throw new Error(`${label}: untyped error ${(thrown as Error)?.stack ?? String(thrown)}`);
  }
  if ((await snapshot()) !== before)
    throw new Error(`${label}: refused but changed the stored state`);
}

/** Runs a fast-check property, recording its counterexample as a failure. */
export async function property<T>(
  tally: Tally,
  name: string,
  arb: fc.Arbitrary<T>,
  body: (value: T) => Promise<void>,
  runs = RUNS,
): Promise<void> {
  try {
    await fc.assert(fc.asyncProperty(arb, body), { numRuns: runs, endOnFailure: true });
  } catch (error) {
    const message = String((error as Error).message).replace(/\n\nHint:[\s\S]*$/, '');
    // fast-check keeps what the property threw as the cause: it comes first, then the case.
    const cause = (error as Error).cause as Error | undefined;
    const why = cause ? `${cause.stack ?? cause}`.slice(0, 1500) : '';
    tally.fail(`${name}: ${why ? `${why}\n` : ''}${message.slice(0, 1200)}`);
  }
}

/** Texts that are not a usable continuation record. */
function badContinuationRecord(id: string): fc.Arbitrary<string> {
  const valid = encodeSuspension(suspensionAt(id, 3)) as unknown as Record<string, unknown>;
  const text = JSON.stringify(valid);
  const wrong: Array<[string, unknown[]]> = [
    ['version', ['1', null, true, 1.5, []]],
    ['interaction_id', [42, null, {}, []]],
    ['tool_use_id', [7, null, false]],
    ['assistant', ['hello', 3, null, [], { role: 'robot' }]],
    ['messages', [{}, 'x', 5, [1, 2]]],
    ['created_at', [true, 0, 'yesterday', null]],
    ['resolved', ['no', 0, null]],
  ];
  return fc.oneof(
    fc.nat({ max: text.length - 1 }).map((cut) => text.slice(0, cut)),
    fc.string().filter((s) => {
      try {
        JSON.parse(s);
        return false;
      } catch {
        return true;
      }
    }),
    // A version this build does not know: above the newest it writes.
    fc
      .integer({ min: SUSPENSION_VERSION + 1, max: 1_000_000 })
      .map((version) => JSON.stringify({ ...valid, version })),
    fc
      .constantFrom(...wrong)
      .chain(([field, values]) =>
        fc.constantFrom(...values).map((v) => JSON.stringify({ ...valid, [field]: v })),
      ),
    fc.constantFrom('null', '[]', '42', '"text"', '{}'),
  );
}

/** Texts that are not a usable checkpoint (inside a valid file envelope, or the envelope itself). */
function badCheckpoint(): fc.Arbitrary<string> {
  const valid = checkpointAt(5) as unknown as Record<string, unknown>;
  const text = JSON.stringify(valid);
  return fc.oneof(
    fc.nat({ max: text.length - 1 }).map((cut) => text.slice(0, cut)),
    fc.integer({ min: 2, max: 1_000_000 }).map((version) => JSON.stringify({ ...valid, version })),
    fc
      .constantFrom<[string, unknown]>(
        ['version', '1'],
        ['window', {}],
        ['window', [{ role: 'robot', content: [] }]],
        ['runtimeState', []],
        ['interrupts', null],
        ['pendingToolCalls', 5],
        ['interruptToRequester', { a: 1 }],
      )
      .map(([field, v]) => JSON.stringify({ ...valid, [field]: v })),
    fc.constantFrom('[]', '42', '"text"', '{}'),
  );
}

const HOSTILE_IDS = [
  '../x',
  'a/b',
  '\0',
  '',
  'x'.repeat(10_000),
  '.',
  '..',
  'a\\b',
  '/etc/passwd',
  'a\0b',
];
const hostileId = fc.oneof(
  fc.constantFrom(...HOSTILE_IDS),
  fc
    .tuple(fc.string(), fc.constantFrom('/', '\\', '\0', '/../'), fc.string())
    .map((p) => p.join('')),
  fc.string().map((s) => `../${s}`),
  fc.string().map((s) => `.${s}`),
);

function wireCases(tally: Tally, store: FileContinuationStore, dir: string) {
  const snapshot = () => folderSnapshot(dir);
  const known = [
    'text',
    'tool_use',
    'tool_result',
    'image',
    'thinking',
    'redacted_thinking',
    'document',
  ];
  return [
    property(
      tally,
      'wire: unknown block type',
      fc.tuple(fc.string(), fc.constantFrom('user', 'assistant')),
      async ([type, role]) => {
        fc.pre(!known.includes(type));
        const message = { role, content: [{ type, text: 'x' }] };
        await refused(
          tally,
          `parseMessage type ${JSON.stringify(type)}`,
          () => parseMessage(message),
          WireError.is,
          snapshot,
        );
        const assistant = {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'ask_user', input: {} }],
        } as Message;
        await refused(
          tally,
          'save with an unknown block in messages',
          () =>
            store.save({ ...suspensionAt('wire-1', 0), messages: [message as Message, assistant] }),
          ContinuationError.is,
          snapshot,
        );
      },
    ),
    property(
      tally,
      'wire: tool_result for an unknown id',
      fc.string({ minLength: 1 }),
      async (id) => {
        fc.pre(id !== 'toolu_ask_1');
        const messages = [
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'x' }] },
        ];
        await refused(
          tally,
          'parseMessages unknown tool_result',
          () => parseMessages(messages),
          WireError.is,
          snapshot,
        );
        await refused(
          tally,
          'resumeMessages with a tool_result for another id',
          () => resumeMessages(suspensionAt('wire-2', 1), toolResult(id, 'yes')),
          ContinuationError.is,
          snapshot,
        );
      },
    ),
    property(tally, 'wire: duplicate tool_use ids', fc.string({ minLength: 1 }), async (id) => {
      const use = { type: 'tool_use', id, name: 'lookup', input: {} };
      const messages = [
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: [use, use] },
      ];
      await refused(
        tally,
        'parseMessages duplicate tool_use',
        () => parseMessages(messages),
        WireError.is,
        snapshot,
      );
      await refused(
        tally,
        'createSuspension with duplicate tool_use ids',
        () =>
          createSuspension({
            interactionId: 'dup',
            toolUseId: id,
            assistant: messages[1] as Message,
          }),
        ContinuationError.is,
        snapshot,
      );
    }),
  ];
}

/** Files: continuation and checkpoint records, ids, wire messages. */
export async function hostileFiles(tally: Tally): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'x-rel-hostile-'));
  try {
    const store = new FileContinuationStore(join(dir, 'continuations'));
    const checkpoints = new FileCheckpointStore(join(dir, 'checkpoints'));
    await store.save(suspensionAt('keep', 1));
    await checkpoints.put('keep', checkpointAt(1), { expectedRevision: null });
    const snapshot = () => folderSnapshot(dir);

    await property(tally, 'continuation record', badContinuationRecord('bad'), async (text) => {
      await writeFile(join(store.directory, 'bad.json'), text);
      await refused(tally, 'load', () => store.load('bad'), ContinuationError.is, snapshot);
      // markResolved is left out on purpose: since b502202 it consumes a record without
      // decoding it, so marking a corrupt one resolved is a success, not a refusal.
      await refused(
        tally,
        'listUnresolved',
        () => store.listUnresolved(),
        ContinuationError.is,
        snapshot,
      );
    });
    await rm(join(store.directory, 'bad.json'), { force: true });

    // Over the documented limit (DEFAULT_MAX_RECORD_BYTES): refused by size, unread.
    await writeFile(join(store.directory, 'huge.json'), '');
    await truncate(join(store.directory, 'huge.json'), DEFAULT_MAX_RECORD_BYTES + 1);
    await refused(
      tally,
      'load of a record over 16 MiB',
      () => store.load('huge'),
      ContinuationError.is,
      snapshot,
    ).catch((e: Error) => tally.fail(e.message));
    await rm(join(store.directory, 'huge.json'));
    const big = suspensionAt('big', 1);
    big.toolInput = { turns: 1, blob: 'x'.repeat(DEFAULT_MAX_RECORD_BYTES) };
    await refused(
      tally,
      'save of a suspension over 16 MiB',
      () => store.save(big),
      ContinuationError.is,
      snapshot,
    ).catch((e: Error) => tally.fail(e.message));

    await mkdir(join(checkpoints.directory, 'bad'), { recursive: true });
    await property(tally, 'checkpoint record', badCheckpoint(), async (inner) => {
      const envelope = `{"format":"x-session-file","version":1,"threadId":"bad","revision":1,"checkpoint":${inner}}`;
      const text = inner.startsWith('{') && !inner.endsWith('}') ? inner : envelope;
      await writeFile(join(checkpoints.directory, 'bad', '1.json'), text);
      await refused(tally, 'get', () => checkpoints.get('bad'), SessionError.is, snapshot);
    });
    await property(
      tally,
      'checkpoint file envelope',
      fc.integer({ min: 2, max: 1e6 }),
      async (version) => {
        await writeFile(
          join(checkpoints.directory, 'bad', '1.json'),
          `{"format":"x-session-file","version":${version},"threadId":"bad","revision":1,"checkpoint":{}}`,
        );
        await refused(tally, 'get', () => checkpoints.get('bad'), SessionError.is, snapshot);
        await refused(
          tally,
          'put',
          () => checkpoints.put('bad', checkpointAt(2), { expectedRevision: 1 }),
          SessionError.is,
          snapshot,
        );
      },
    );
    await rm(join(checkpoints.directory, 'bad'), { recursive: true });
    await hugeCheckpoint(tally, checkpoints, snapshot);

    await property(tally, 'path-like ids', hostileId, async (id) => {
      await refused(
        tally,
        `load ${JSON.stringify(id.slice(0, 20))}`,
        () => store.load(id),
        ContinuationError.is,
        snapshot,
      );
      await refused(
        tally,
        'markResolved',
        () => store.markResolved(id),
        ContinuationError.is,
        snapshot,
      );
      await refused(
        tally,
        'save',
        () => store.save({ ...suspensionAt('x', 1), interactionId: id }),
        ContinuationError.is,
        snapshot,
      );
      await refused(tally, 'sessionDir', () => sessionDir(dir, id), ContinuationError.is, snapshot);
      await refused(tally, 'checkpoint get', () => checkpoints.get(id), SessionError.is, snapshot);
      await refused(
        tally,
        'checkpoint put',
        () => checkpoints.put(id, checkpointAt(1)),
        SessionError.is,
        snapshot,
      );
      await refused(
        tally,
        'checkpoint delete',
        () => checkpoints.delete(id),
        SessionError.is,
        snapshot,
      );
    });
    await Promise.all(wireCases(tally, store, dir));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A checkpoint bigger than any sane limit must be refused with a typed error. */
async function hugeCheckpoint(
  tally: Tally,
  store: CheckpointStore,
  snapshot: () => Promise<string>,
): Promise<void> {
  const huge = checkpointAt(1);
  huge.runtimeState.blob = 'x'.repeat(DEFAULT_MAX_RECORD_BYTES + 1);
  const thread = `huge-${randomUUID().slice(0, 8)}`;
  try {
    await refused(
      tally,
      'checkpoint put over 16 MiB',
      () => store.put(thread, huge),
      SessionError.is,
      snapshot,
    );
  } catch (error) {
    tally.fail(
      `${(error as Error).message}: @x/session documents no size limit for checkpoints, so a ${DEFAULT_MAX_RECORD_BYTES + 1}-byte state was stored (issue 9 asks for a documented limit and a typed error over it)`,
    );
    await store.delete(thread).catch(() => {});
  }
}

/** Postgres: records, ids and answers; nothing in the database may change. */
export async function hostilePostgres(tally: Tally): Promise<void> {
  const database = await createDatabase();
  const sql = client(database.url);
  try {
    const db = drizzle({ client: sql });
    await migrateAskUser(db);
    await migrateContinuations(db);
    await migrateCheckpoints(db);
    const continuations = new PostgresContinuationStore(db);
    const checkpoints = new PostgresCheckpointStore(db);
    const pauses = new AskUserStore(db);
    const snapshot = () => databaseSnapshot(sql);
    await continuations.save(suspensionAt('keep', 1));
    await checkpoints.put('keep', checkpointAt(1), { expectedRevision: null });
    const token = randomUUID();
    await pauses.insert({
      token,
      conversationId: 'c',
      kind: 'ask_user',
      question: 'Go?',
      toolCallId: 'call_1',
    });
    const other = randomUUID();
    await pauses.insert({
      token: other,
      conversationId: 'c',
      kind: 'ask_user',
      question: 'And?',
      toolCallId: 'call_2',
    });

    await property(
      tally,
      'postgres continuation record',
      badContinuationRecord('bad'),
      async (text) => {
        await sql`insert into x_continuation.suspensions (interaction_id, record, resolved, created_at)
                values ('bad', ${text}, false, now())
                on conflict (interaction_id) do update set record = excluded.record`;
        await refused(
          tally,
          'load',
          () => continuations.load('bad'),
          ContinuationError.is,
          snapshot,
        );
        await refused(
          tally,
          'listUnresolved',
          () => continuations.listUnresolved(),
          ContinuationError.is,
          snapshot,
        );
      },
    );
    await sql`delete from x_continuation.suspensions where interaction_id = 'bad'`;
    await property(tally, 'postgres checkpoint record', badCheckpoint(), async (text) => {
      await sql`insert into x_session.checkpoints (thread_id, revision, version, checkpoint)
                values ('bad', 1, 1, ${text})
                on conflict (thread_id) do update set checkpoint = excluded.checkpoint`;
      await refused(tally, 'get', () => checkpoints.get('bad'), SessionError.is, snapshot);
    });
    await sql`delete from x_session.checkpoints where thread_id = 'bad'`;
    await hugeCheckpoint(tally, checkpoints, snapshot);

    // Refused as bad input, never as the database being unavailable (SQLSTATE class 22 is
    // the caller's value, not an outage).
    const asInput =
      (guard: Guard): Guard =>
      (e) =>
        guard(e) && (e as { code?: unknown }).code !== 'unavailable';
    await property(
      tally,
      'postgres ids with NUL or empty',
      fc.constantFrom('\0', '', 'a\0b', `${'\0'.repeat(3)}x`),
      async (id) => {
        await refused(
          tally,
          'save',
          () => continuations.save({ ...suspensionAt('x', 1), interactionId: id }),
          asInput(ContinuationError.is),
          snapshot,
        );
        await refused(
          tally,
          'load',
          () => continuations.load(id),
          asInput(ContinuationError.is),
          snapshot,
        );
        await refused(
          tally,
          'checkpoint put',
          () => checkpoints.put(id, checkpointAt(1)),
          asInput(SessionError.is),
          snapshot,
        );
        await refused(
          tally,
          'pause insert',
          () =>
            pauses.insert({
              token: id,
              conversationId: 'c',
              kind: 'ask_user',
              question: 'Go?',
              toolCallId: 'call_x',
            }),
          asInput(isAskUserError),
          snapshot,
        );
        await refused(
          tally,
          'markResumed',
          () => pauses.markResumed(id, { action: 'accept', content: 'x' }),
          asInput(isAskUserError),
          snapshot,
        );
      },
      4,
    );

    const badAnswer = fc.oneof(
      fc
        .tuple(fc.string(), fc.string())
        .filter(([action]) => !['accept', 'decline', 'cancel'].includes(action))
        .map(([action, content]) => ({ action, content })),
      fc
        .tuple(fc.constantFrom('accept', 'decline', 'cancel'), fc.anything())
        .filter(([, content]) => typeof content !== 'string' && content !== undefined)
        .map(([action, content]) => ({ action, content })),
      // Content no database stores: a NUL, a lone surrogate.
      fc
        .tuple(
          fc.constantFrom('accept', 'decline', 'cancel'),
          fc.string({ maxLength: 20 }),
          fc.constantFrom('\0', '\ud800', '\udfff'),
        )
        .map(([action, text, bad]) => ({ action, content: `${text}${bad}${text}` })),
    ) as fc.Arbitrary<unknown> as fc.Arbitrary<ResumeAnswer>;
    await property(tally, 'answers', badAnswer, async (answer) => {
      await refused(
        tally,
        'markResumed',
        () => pauses.markResumed(token, answer),
        asInput(isAskUserError),
        snapshot,
      );
      await refused(
        tally,
        'markResumedBatch with one bad answer',
        () =>
          pauses.markResumedBatch([
            { token: other, answer: { action: 'accept', content: 'ok' } },
            { token, answer },
          ]),
        asInput(isAskUserError),
        snapshot,
      );
    });
    tally.check(
      (await pauses.listPendingAll()).length === 2,
      () => 'a refused answer resolved a pause',
    );
  } finally {
    await sql.end({ timeout: 5 });
    await database.drop();
  }
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSuspension, encodeSuspension } from './codec.js';
import { ContinuationError } from './errors.js';
import { validateSuspension } from './suspension.js';
import { sampleSuspension } from './testing/index.js';

const goRecord = {
  version: 1,
  session_id: 'sess-7',
  interaction_id: 'ask-7',
  tool_use_id: 'toolu_7',
  tool_name: 'ask_user',
  tool_input: { question: 'Ship it?' },
  assistant: {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'toolu_7', name: 'ask_user', input: { question: 'Ship it?' } },
    ],
  },
  created_at: '2025-03-04T05:06:07.891234567Z',
  resolved: false,
};

describe('encodeSuspension / decodeSuspension', () => {
  it('decodes a record written by another program (nanosecond time, zone offset)', () => {
    const s = decodeSuspension(goRecord);
    expect(s).toEqual({
      version: 1,
      sessionId: 'sess-7',
      interactionId: 'ask-7',
      toolUseId: 'toolu_7',
      toolName: 'ask_user',
      toolInput: { question: 'Ship it?' },
      assistant: goRecord.assistant,
      createdAt: new Date('2025-03-04T05:06:07.891Z'),
      resolved: false,
    });
  });

  it('encodes to the snake_case field names, leaving absent optional fields out', () => {
    const s = decodeSuspension(goRecord);
    expect(encodeSuspension(s)).toEqual({ ...goRecord, created_at: '2025-03-04T05:06:07.891Z' });
    const bare = sampleSuspension();
    const record = encodeSuspension(bare);
    expect(Object.keys(record)).toEqual([
      'version',
      'interaction_id',
      'tool_use_id',
      'tool_name',
      'tool_input',
      'assistant',
      'created_at',
      'resolved',
    ]);
  });

  it('treats empty strings and empty or null messages as absent', () => {
    const s = decodeSuspension({
      ...goRecord,
      session_id: '',
      run_id: '',
      tool_name: '',
      messages: null,
    });
    expect(s.sessionId).toBeUndefined();
    expect(s.runId).toBeUndefined();
    expect(s.toolName).toBeUndefined();
    expect(decodeSuspension({ ...goRecord, messages: [] }).messages).toBeUndefined();
  });

  it('accepts RFC 3339 offsets and no fraction', () => {
    expect(
      decodeSuspension({ ...goRecord, created_at: '2025-03-04T07:06:07+02:00' }).createdAt,
    ).toEqual(new Date('2025-03-04T05:06:07Z'));
  });

  it('round-trips any suspension (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          sessionId: fc.option(fc.string({ minLength: 1 }), { nil: undefined }),
          runId: fc.option(fc.string({ minLength: 1 }), { nil: undefined }),
          withMessages: fc.boolean(),
          ms: fc.integer({ min: 0, max: 4_102_444_800_000 }),
          question: fc.string(),
        }),
        ({ sessionId, runId, withMessages, ms, question }) => {
          const s = sampleSuspension({
            createdAt: new Date(ms),
            ...(sessionId === undefined ? {} : { sessionId }),
            ...(runId === undefined ? {} : { runId }),
            ...(withMessages ? { messages: true } : {}),
          });
          const t = { ...s, toolInput: { question } };
          const back = decodeSuspension(JSON.parse(JSON.stringify(encodeSuspension(t))));
          expect(back).toEqual(t);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a deadline makes a version 2 record; without one the record stays version 1', () => {
    const at = new Date('2026-12-01T12:00:00Z');
    const answer = { approved: false, reason: 'nobody was there' };
    const s = sampleSuspension({ deadline: { at, answer } });
    expect(s.version).toBe(2);
    const record = encodeSuspension(s);
    expect(record).toMatchObject({
      version: 2,
      deadline: { at: '2026-12-01T12:00:00.000Z', answer },
      resolved: false,
    });
    expect(Object.keys(record).slice(-3)).toEqual(['created_at', 'deadline', 'resolved']);
    expect(decodeSuspension(JSON.parse(JSON.stringify(record)))).toEqual(s);
    expect(encodeSuspension(sampleSuspension()).version).toBe(1);
  });

  it('upgrades a version 1 record and keeps its version, so writing it back stays version 1', () => {
    const s = decodeSuspension(goRecord);
    expect(s.version).toBe(1);
    expect(encodeSuspension(s).version).toBe(1);
    // Version 1 has no deadline: a key of that name there is not read as one.
    const stray = decodeSuspension({ ...goRecord, deadline: { at: 'x', answer: 1 } });
    expect(stray.deadline).toBeUndefined();
  });

  it('refuses a deadline on version 1, and a bad deadline, naming the field', () => {
    const at = new Date('2026-12-01T12:00:00Z');
    const s = sampleSuspension({ deadline: { at, answer: { approved: false } } });
    expect(() => validateSuspension({ ...s, version: 1 })).toThrow(
      expect.objectContaining({ code: 'invalid', field: 'version' }),
    );
    const record = { ...encodeSuspension(s) } as Record<string, unknown>;
    for (const [deadline, field] of [
      [{ at: 'tomorrow', answer: 1 }, 'deadline.at'],
      [{ at: '2026-12-01T12:00:00Z' }, 'deadline.answer'],
      [{ at: '2026-13-45T12:00:00Z', answer: 1 }, 'deadline.at'],
    ] as const) {
      expect(() => decodeSuspension({ ...record, deadline })).toThrow(
        expect.objectContaining({ code: 'invalid', field }),
      );
    }
  });

  it('an unknown version is unsupported_version, checked before anything else', () => {
    for (const version of [0, 3, 99]) {
      expect(() => decodeSuspension({ version })).toThrow(
        expect.objectContaining({ code: 'unsupported_version' }),
      );
    }
  });

  it.each([
    [null, '(record)'],
    [[], '(record)'],
    [{ ...goRecord, version: undefined }, 'version'],
    [{ ...goRecord, version: 1.5 }, 'version'],
    [{ ...goRecord, interaction_id: '' }, 'interaction_id'],
    [{ ...goRecord, tool_use_id: undefined }, 'tool_use_id'],
    [{ ...goRecord, created_at: '2025-03-04 05:06:07' }, 'created_at'],
    [{ ...goRecord, created_at: '2025-13-45T05:06:07Z' }, 'created_at'],
    [{ ...goRecord, resolved: undefined }, 'resolved'],
    [
      { ...goRecord, messages: [{ role: 'user', content: [{ type: 'nope' }] }] },
      'messages[0].content',
    ],
  ])('a bad record is invalid naming the field (%#)', (record, field) => {
    let err: unknown;
    try {
      decodeSuspension(record);
    } catch (e) {
      err = e;
    }
    expect(ContinuationError.is(err)).toBe(true);
    expect(err).toMatchObject({ code: 'invalid' });
    expect((err as ContinuationError).field?.startsWith(field)).toBe(true);
  });
});

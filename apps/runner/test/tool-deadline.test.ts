import { acceptedArguments, deadlineFor, questionOf } from '@x/executive';
import type { JsonValue } from '@x/wire';
import { afterEach, describe, expect, it } from 'vitest';
import { questionPolicyFromEnv } from '../src/config/executive-policy.js';
import { demoGatedTools } from '../src/demo/tools.js';

// The `deadline` of ask_user's and approve's tool input, checked and capped, and how it meets
// RUNNER_DEADLINE; and the arguments an accepting answer to a gated call runs with.

const now = Date.parse('2026-12-01T12:00:00Z');
const use = (name: string, input: JsonValue) => ({
  type: 'tool_use' as const,
  id: 't1',
  name,
  input,
});

describe('a deadline on the tool input', () => {
  afterEach(() => {
    delete process.env.RUNNER_DEADLINE;
  });

  it('takes a duration or an absolute time, with its default', () => {
    expect(
      questionOf(
        use('ask_user', {
          question: 'Where?',
          deadline: { after: '30m', default: 'accept', content: 'Lisbon' },
        }),
        now,
      ),
    ).toMatchObject({
      deadline: {
        at: new Date(now + 30 * 60_000),
        answer: { action: 'accept', content: 'Lisbon' },
      },
    });
    expect(
      questionOf(
        use('approve', {
          action: 'pay',
          deadline: { at: '2026-12-02T12:00:00+01:00', default: 'decline' },
        }),
        now,
      ),
    ).toMatchObject({
      deadline: {
        at: new Date('2026-12-02T11:00:00Z'),
        answer: { action: 'decline', content: '' },
      },
    });
  });

  it('refuses one in the past, beyond 30 days, both or neither of at and after, and an approval that accepts itself', () => {
    const approve = (deadline: JsonValue) =>
      questionOf(use('approve', { action: 'pay', deadline }), now);
    expect(approve({ at: '2026-12-01T11:00:00Z', default: 'decline' })).toEqual({
      error: 'deadline: it has passed already; give a time in the future',
    });
    expect(approve({ after: '31d', default: 'decline' })).toEqual({
      error: 'deadline: at most 30 days from now',
    });
    expect(approve({ after: '1h', at: '2026-12-02T00:00:00Z', default: 'cancel' })).toMatchObject({
      error: expect.stringContaining('give exactly one of at or after'),
    });
    expect(approve({ default: 'cancel' })).toMatchObject({
      error: expect.stringContaining('give exactly one'),
    });
    expect(approve({ after: '1h', default: 'accept' })).toEqual({
      error: 'deadline.default: an approval cannot default to accept; use decline or cancel',
    });
  });

  it("RUNNER_DEADLINE holds when it comes first; the model's when it does", () => {
    process.env.RUNNER_DEADLINE = 'ask_user=1h:decline';
    const soon = questionOf(
      use('ask_user', { question: 'Where?', deadline: { after: '10m', default: 'cancel' } }),
      now,
    );
    const late = questionOf(
      use('ask_user', { question: 'Where?', deadline: { after: '2h', default: 'cancel' } }),
      now,
    );
    if ('error' in soon || 'error' in late) throw new Error('refused');
    const policy = questionPolicyFromEnv();
    expect(deadlineFor(soon, policy, now)).toEqual({
      at: new Date(now + 600_000),
      answer: { action: 'cancel', content: '' },
    });
    expect(deadlineFor(late, policy, now)).toEqual({
      at: new Date(now + 3_600_000),
      answer: { action: 'decline', content: '' },
    });
  });
});

describe('the arguments an approved gated call runs with', () => {
  const asked = { to: 'ada@example.com', subject: 'Hi', body: 'Hello' };

  it('empty content: as asked; a JSON object: those, checked against the schema', () => {
    expect(acceptedArguments(demoGatedTools, 'send_email', asked, '')).toEqual({
      arguments: asked,
      edited: false,
    });
    expect(
      acceptedArguments(
        demoGatedTools,
        'send_email',
        asked,
        JSON.stringify({ ...asked, subject: 'Hello' }),
      ),
    ).toEqual({
      arguments: { ...asked, subject: 'Hello' },
      edited: true,
    });
    expect(acceptedArguments(demoGatedTools, 'send_email', asked, JSON.stringify(asked))).toEqual({
      arguments: asked,
      edited: false,
    });
    expect(acceptedArguments(demoGatedTools, 'send_email', asked, 'ok')).toMatchObject({
      error: expect.stringContaining('its arguments as a JSON object'),
    });
    expect(
      acceptedArguments(
        demoGatedTools,
        'send_email',
        asked,
        JSON.stringify({ ...asked, to: 'nobody', cc: 'x' }),
      ),
    ).toMatchObject({
      error: expect.stringMatching(/do not fit its schema[\s\S]*"cc"[\s\S]*at to/),
    });
  });
});

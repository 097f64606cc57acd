import { describe, expect, it } from 'vitest';
import { questionEvent, runEvent } from './index.js';

const pause = {
  token: 't1',
  conversationId: 'c1',
  kind: 'approve',
  question: 'Pay 40?',
  options: null,
  priority: 2,
  audience: { names: [], roles: ['finance'] },
  requester: 'bob',
  resumeContext: { run: 'r1', model: 'm' },
};

describe('the events the flows announce', () => {
  it("a question's event carries its ids, what it asks, the extra fields and the facts to route it by", () => {
    expect(questionEvent('question.answered', pause, { answeredBy: 'ada' })).toEqual({
      kind: 'question.answered',
      data: {
        token: 't1',
        conversationId: 'c1',
        runId: 'r1',
        tool: 'approve',
        question: 'Pay 40?',
        options: null,
        priority: 2,
        audience: { names: [], roles: ['finance'] },
        requester: 'bob',
        answeredBy: 'ada',
      },
      question: { tool: 'approve', priority: 2, audience: { names: [], roles: ['finance'] } },
    });
    const bare = questionEvent('question.created', {
      ...pause,
      requester: undefined,
      resumeContext: null,
    });
    expect(bare.data).not.toHaveProperty('runId');
    expect(bare.data.requester).toBeNull();
  });

  it("a run's event carries its ids and the requester its meta names, else null", () => {
    const run = { runId: 'r1', conversationId: 'c1', meta: { requester: 'bob' } };
    expect(runEvent('run.failed', run, { error: 'boom' })).toEqual({
      kind: 'run.failed',
      data: { runId: 'r1', conversationId: 'c1', requester: 'bob', error: 'boom' },
    });
    expect(runEvent('run.completed', { ...run, meta: null }).data.requester).toBeNull();
  });
});

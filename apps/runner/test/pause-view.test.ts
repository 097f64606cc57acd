import type { Pending } from '@x/askuser';
import { describe, expect, it } from 'vitest';
import { pauseView } from '../src/serve/views.js';

/** An approve question as the store lists it, with `resumeContext` as its kind wrote it. */
function approveQuestion(resumeContext: Record<string, unknown>): Pending {
  return {
    token: 't1',
    conversationId: 'c1',
    kind: 'approve',
    question: 'Allow the agent to call pay with {"amount":42}?',
    options: null,
    priority: 0,
    proxiedFromChildId: '',
    createdAt: new Date(0),
    deadline: null,
    reminder: null,
    escalation: null,
    quorum: null,
    resumeContext,
  } as unknown as Pending;
}

describe('pauseView', () => {
  it('says when the asking kind cannot run the call with edited arguments', () => {
    const fixed = approveQuestion({ model: 'agent', run: 'r1', fixedArguments: true });
    expect(pauseView(fixed, 0).fixedArguments).toBe(true);
    const editable = approveQuestion({ model: 'scripted', run: 'r1' });
    expect(pauseView(editable, 0).fixedArguments).toBeUndefined();
  });
});

import { CHECKPOINT_VERSION, type SessionCheckpoint } from '../checkpoint.js';

/**
 * A small valid checkpoint whose content depends on `seed`, for store tests: a window with a
 * pending tool call, user state, a plan, one pending and one resolved interrupt.
 */
export function sampleCheckpoint(seed = 0): SessionCheckpoint {
  return {
    version: CHECKPOINT_VERSION,
    window: [
      { role: 'user', content: [{ type: 'text', text: `hello ${seed}` }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me ask.' },
          { type: 'tool_use', id: `toolu_${seed}`, name: 'ask_user', input: { question: 'Go?' } },
        ],
      },
    ],
    runtimeState: {
      _plan_document: `plan ${seed}`,
      _plan_todos: [{ id: 't1', content: 'step', status: 'in_progress' }],
      counter: seed,
      nested: { list: [1, 'two', null, true], ünïcödé: '✓' },
    },
    interrupts: {
      pending: {
        [`toolu_${seed}`]: {
          id: `toolu_${seed}`,
          kind: 'ask_user',
          payload: { question: 'Go?' },
          status: 'pending',
        },
      },
      resolved: {
        toolu_old: {
          id: 'toolu_old',
          kind: 'approval',
          payload: null,
          status: 'resolved',
          result: { ok: true },
        },
      },
    },
    pendingToolCalls: {
      [`toolu_${seed}`]: { id: `toolu_${seed}`, name: 'ask_user', input: { question: 'Go?' } },
    },
    interruptToRequester: {},
  };
}

import type { ContextView, RunView } from '@x/approval-center/contract';
import { api } from './api-client.js';
import { h, replace } from './dom.js';
import { actionWords, answeredByText, kindLabel, readable, titleOf } from './rows.js';
import { shown } from './shown.js';

const runWords: Record<RunView['status'], string> = {
  running: 'resuming now',
  waiting: 'waiting for an answer',
  ready: 'answered, waiting to be resumed',
  completed: 'completed',
  cancelled: 'cancelled',
  failed: 'failed (runner retry makes it ready again)',
};

/** The arguments of a tool call as a list of names and values. */
function argumentList(input: unknown) {
  const entries =
    input !== null && typeof input === 'object' && !Array.isArray(input)
      ? Object.entries(input)
      : [['input', input] as const];
  return h(
    'dl',
    { class: 'args' },
    ...entries.flatMap(([name, value]) => [
      h('dt', {}, shown(name, true)),
      h('dd', {}, readable(value)),
    ]),
  );
}

function toolCallPart(context: ContextView) {
  const call = context.toolCall;
  if (!call) return null;
  const approval = call.name === 'approve';
  return h(
    'div',
    { class: `call${approval ? ' proposal' : ''}` },
    h('h3', {}, approval ? 'Proposed action' : 'Tool call'),
    h('p', { class: 'tool' }, h('code', {}, shown(call.name, true)), ` (${kindLabel(call.name)})`),
    argumentList(call.input),
  );
}

function messagesPart(context: ContextView) {
  if (context.messages.length === 0) return null;
  const count = context.messages.length;
  return h(
    'details',
    { class: 'messages' },
    h(
      'summary',
      {},
      `Conversation: the last ${count} message${count === 1 ? '' : 's'}`,
      context.earlierMessages ? ` (${context.earlierMessages} earlier)` : '',
    ),
    h(
      'ol',
      {},
      ...context.messages.map((m) =>
        h('li', { class: `message ${m.role}` }, h('strong', {}, `${m.role}: `), shown(m.text)),
      ),
    ),
  );
}

function runPart(context: ContextView) {
  const { run } = context;
  return h(
    'div',
    { class: 'run' },
    h('h3', {}, 'Run'),
    run
      ? h(
          'p',
          { class: 'run-status', 'data-run-status': run.status },
          runWords[run.status],
          run.attempts > 1 ? ` · ${run.attempts} attempts` : '',
          run.lastError ? ` · last error: ${run.lastError}` : '',
        )
      : h('p', { class: 'hint' }, 'No run is recorded for this question.'),
    context.history.length
      ? h(
          'ol',
          { class: 'history', 'aria-label': 'Questions of this run' },
          ...context.history.map((item) => {
            const by = answeredByText(item);
            return h(
              'li',
              {
                'data-token': item.token,
                class: item.token === context.token ? 'this' : undefined,
              },
              h('span', { class: 'q' }, titleOf(item)),
              ' → ',
              item.answer
                ? `${actionWords[item.answer.action]}${item.answer.content ? `: ${item.answer.content}` : ''}`
                : 'waiting for an answer',
              by ? ` (by ${by})` : '',
            );
          }),
        )
      : null,
  );
}

/** The context of a question: goal, the tool call that asked, recent messages, the run. */
export function contextSection(context: ContextView) {
  return h(
    'section',
    { class: 'context', 'aria-label': 'Context' },
    context.goal ? h('p', { class: 'goal' }, h('strong', {}, 'Goal: '), shown(context.goal)) : null,
    toolCallPart(context),
    messagesPart(context),
    runPart(context),
  );
}

/** A place for the question's context, filled when the server has answered. */
export function contextSlot(token: string, onLoaded?: (context: ContextView) => void) {
  const slot = h('div', { class: 'context-slot' }, h('p', { class: 'hint' }, 'Loading context…'));
  api.context(token).then(
    (context) => {
      if (!slot.isConnected) return;
      replace(slot, contextSection(context));
      onLoaded?.(context);
    },
    (e) => {
      if (slot.isConnected)
        replace(
          slot,
          h('p', { class: 'hint' }, `No context: ${e instanceof Error ? e.message : e}`),
        );
    },
  );
  return slot;
}

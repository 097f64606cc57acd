import type { Pause, Recent } from './api.js';
import { age, h } from './dom.js';

/** The priority badge: higher is more urgent. */
export function badge(priority: number) {
  const level = priority >= 5 ? 'high' : priority >= 1 ? 'mid' : 'low';
  return h('span', { class: `badge ${level}`, title: `priority ${priority}` }, `P${priority}`);
}

/** Conversation and source-thread labels. */
export function labels(item: { conversationId: string; kind: string; proxiedFromChildId: string }) {
  return [
    h('span', { class: 'label conv', title: 'conversation' }, item.conversationId),
    h('span', { class: 'label kind' }, item.kind),
    item.proxiedFromChildId
      ? h(
          'span',
          { class: 'label via', title: 'asked by this child thread' },
          `via ${item.proxiedFromChildId}`,
        )
      : null,
  ];
}

/** One row of the pending list. */
export function pendingRow(
  pause: Pause,
  ageMs: number,
  state: { selected: boolean; checked: boolean },
  on: { open: () => void; check: (checked: boolean) => void },
) {
  const checkbox = h('input', {
    type: 'checkbox',
    class: 'check',
    'aria-label': `Select for a batch answer: ${pause.question}`,
    onchange: (event) => on.check((event.target as HTMLInputElement).checked),
  });
  checkbox.checked = state.checked;
  return h(
    'li',
    { class: `row${state.selected ? ' selected' : ''}`, 'data-token': pause.token },
    checkbox,
    h(
      'button',
      {
        type: 'button',
        class: 'open',
        'aria-current': state.selected ? 'true' : undefined,
        onclick: on.open,
      },
      h(
        'span',
        { class: 'meta' },
        badge(pause.priority),
        ...labels(pause),
        h('span', { class: 'age' }, age(ageMs)),
      ),
      h('span', { class: 'q' }, pause.question),
    ),
  );
}

const outcomeText: Record<string, string> = {
  completed: 'run completed',
  waiting: 'run asked again',
  cancelled: 'run cancelled',
};

/** One row of the recent list. */
export function recentRow(record: Recent) {
  const status =
    record.status === 'resumed'
      ? `resolved · ${outcomeText[record.outcome ?? ''] ?? 'resumed'}`
      : record.status === 'answered'
        ? 'answered · waiting for the run to resume'
        : record.status === 'closed'
          ? 'answered'
          : 'pending';
  return h(
    'li',
    {
      class: `row recent-row status-${record.status}`,
      'data-token': record.token,
      'data-status': record.status,
      'data-outcome': record.outcome ?? '',
    },
    h(
      'span',
      { class: 'meta' },
      badge(record.priority),
      ...labels(record),
      h('span', { class: `status ${record.status}` }, status),
    ),
    h('span', { class: 'q' }, record.question),
    record.answer
      ? h(
          'span',
          { class: `answer ${record.answer.action}` },
          h('strong', {}, record.answer.action),
          record.answer.content ? ` · ${record.answer.content}` : '',
        )
      : null,
  );
}

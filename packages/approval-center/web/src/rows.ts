import type {
  AnswerAction,
  GatedView,
  PauseView,
  PriorityLabel,
  RecentView,
  SourceView,
} from '@x/approval-center/contract';
import { age, h, relative } from './dom.js';
import { shown } from './shown.js';
import { ageOf, msLeftOf } from './state.js';

/**
 * The priority in the server's word (the CLI's lists use the same), or nothing for the
 * default 0: a bare "P0" beside "P1" reads as the more urgent one.
 */
export function priorityBadge({
  priority,
  priorityLabel,
}: {
  priority: number;
  priorityLabel: PriorityLabel | null;
}) {
  if (priorityLabel === null) return null;
  return h(
    'span',
    {
      class: `badge ${priorityLabel === 'urgent' ? 'high' : 'mid'}`,
      title: `priority ${priority} (0 is the default, 10 the most)`,
    },
    priorityLabel,
  );
}

const kindNames: Record<string, string> = {
  ask_user: 'question',
  approve: 'approval',
  elicitation: 'form (MCP)',
};

/** The kind of a question in an operator's words (`approve` → "approval"). */
export function kindLabel(kind: string): string {
  return kindNames[kind] ?? kind.replaceAll('_', ' ');
}

/** What an answer did, in words. */
export const actionWords: Record<AnswerAction, string> = {
  accept: 'accepted',
  decline: 'declined',
  cancel: 'cancelled',
};

/**
 * A tool call's argument as words: text as it is, a list joined, an object (an audience, a
 * deadline) as its names and values, never as JSON; control characters escaped (newlines too
 * when `oneLine`).
 */
export function readable(value: unknown, oneLine = false): string {
  if (typeof value === 'string') return shown(value, oneLine);
  if (Array.isArray(value)) return value.map((inner) => readable(inner, oneLine)).join(' · ');
  if (value !== null && typeof value === 'object') {
    return Object.entries(value)
      .map(([name, inner]) => `${shown(name, true)}: ${readable(inner, oneLine)}`)
      .join('; ');
  }
  return String(value);
}

/**
 * A question's title: a gated call's as its tool and arguments in words ("Approve send_email
 * (to: …, subject: …)?"), any other question's text as asked; control characters escaped.
 */
export function titleOf(item: { question: string; gated: GatedView | null }): string {
  if (!item.gated) return shown(item.question);
  const args = Object.entries(item.gated.arguments).map(
    ([name, value]) => `${shown(name, true)}: ${readable(value, true)}`,
  );
  return `Approve ${shown(item.gated.tool, true)}${args.length ? ` (${args.join(', ')})` : ''}?`;
}

/**
 * Who answered: every approver of a quorum's accepted answer (every decliner of its
 * declined one), else the one `answeredBy` names; `null` when nobody is recorded.
 */
export function answeredByText(record: RecentView): string | null {
  const { answer, quorum, answeredBy } = record;
  const counted =
    record.expiredAt || !quorum
      ? []
      : answer?.action === 'accept'
        ? quorum.approvals
        : answer?.action === 'decline'
          ? quorum.declines
          : [];
  const names = counted.map((a) => a.operator);
  if (answeredBy && !names.includes(answeredBy)) names.push(answeredBy);
  return names.length > 0 ? names.join(', ') : null;
}

/** "worker w2 of conversation C (via delegate)". */
export function sourceText(source: SourceView, conversationId: string): string {
  return `worker ${source.worker} of conversation ${conversationId} (via delegate)`;
}

/** Who asked a worker's question, and its sub-task. */
export function sourcePart(item: { conversationId: string; source: SourceView | null }) {
  if (!item.source) return null;
  return h(
    'div',
    { class: 'source' },
    h('p', {}, 'Asked by ', h('strong', {}, sourceText(item.source, item.conversationId))),
    item.source.task ? h('p', { class: 'task' }, 'Sub-task: ', item.source.task) : null,
  );
}

/** Conversation, kind and source-worker labels. */
export function labels(item: { conversationId: string; kind: string; proxiedFromChildId: string }) {
  return [
    h('span', { class: 'label conv', title: 'conversation' }, item.conversationId),
    h('span', { class: `label kind kind-${item.kind}`, title: 'kind' }, kindLabel(item.kind)),
    item.proxiedFromChildId
      ? h(
          'span',
          { class: 'label via', title: 'asked by this worker of the conversation' },
          `via ${item.proxiedFromChildId}`,
        )
      : null,
  ];
}

/** "3 min left" until a deadline, from the server's `msLeft`; "passed" at 0. */
export function timeLeft(msLeft: number): string {
  if (msLeft <= 0) return 'passed';
  const s = Math.ceil(msLeft / 1000);
  if (s < 120) return `${s} s left`;
  if (s < 7200) return `${Math.round(s / 60)} min left`;
  if (s < 172800) return `${Math.round(s / 3600)} h left`;
  return `${Math.round(s / 86400)} d left`;
}

/** "2 of 3 approvals", for a question that needs a quorum. */
export function approvalsText(quorum: NonNullable<PauseView['quorum']>): string {
  return `${quorum.approvals.length} of ${quorum.needed} approvals`;
}

/**
 * A time of a pending question as people say it ("in 3 h", "2 h ago", by the server's clock
 * now), the exact local time in its tooltip.
 */
function when(pause: PauseView, at: string) {
  const serverNow = Date.parse(pause.createdAt) + ageOf(pause);
  return h(
    'time',
    { datetime: at, title: new Date(at).toLocaleString() },
    relative(Date.parse(at) - serverNow),
  );
}

/**
 * A pending question's deadline and time left, its approvals so far (and who gave them), and
 * its reminder and escalation: the lines of the detail view, `null` when it has none.
 */
export function waitPart(pause: PauseView) {
  const { deadline, quorum, reminder, escalation } = pause;
  if (!deadline && !quorum && !reminder && !escalation) return null;
  const who = (list: { operator: string }[]) => list.map((a) => a.operator).join(', ');
  return h(
    'div',
    { class: 'wait', id: 'wait' },
    deadline
      ? h(
          'p',
          { class: 'deadline' },
          'Deadline ',
          when(pause, deadline.at),
          ` · ${timeLeft(msLeftOf(deadline))} · then ${deadline.answer.action}`,
          deadline.answer.content ? ` “${deadline.answer.content}”` : '',
        )
      : null,
    quorum
      ? h(
          'p',
          { class: 'quorum' },
          approvalsText(quorum),
          quorum.approvals.length > 0 ? ` (${who(quorum.approvals)})` : '',
          quorum.declines.length > 0
            ? ` · ${quorum.declines.length} of ${quorum.declinesNeeded} declines (${who(quorum.declines)})`
            : '',
        )
      : null,
    reminder
      ? h(
          'p',
          { class: 'reminder' },
          reminder.remindedAt ? 'Reminded ' : 'Reminder ',
          when(pause, reminder.remindedAt ?? reminder.at),
        )
      : null,
    escalation
      ? h(
          'p',
          { class: 'escalation' },
          `${escalation.escalatedAt ? 'Escalated' : 'Escalates'} to ${[
            ...escalation.roles,
            ...escalation.names.map((n) => `@${n}`),
          ].join(', ')} `,
          when(pause, escalation.escalatedAt ?? escalation.at),
        )
      : null,
  );
}

/** One row of the pending list. */
export function pendingRow(
  pause: PauseView,
  ageMs: number,
  state: { selected: boolean; checked: boolean },
  on: { open: () => void; check: (checked: boolean) => void },
) {
  const checkbox = h('input', {
    type: 'checkbox',
    class: 'check',
    'aria-label': `Select for a batch answer: ${titleOf(pause)}`,
    onchange: (event) => on.check((event.target as HTMLInputElement).checked),
  });
  checkbox.checked = state.checked;
  // A question this operator may not answer cannot join a batch answer either.
  checkbox.disabled = !pause.canAnswer;
  return h(
    'li',
    { class: `row${state.selected ? ' selected' : ''}`, 'data-token': pause.token },
    h('label', { class: 'check-area' }, checkbox),
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
        priorityBadge(pause),
        ...labels(pause),
        h('span', { class: 'age' }, age(ageMs)),
        pause.deadline
          ? h(
              'span',
              { class: 'left', title: `deadline ${new Date(pause.deadline.at).toLocaleString()}` },
              timeLeft(msLeftOf(pause.deadline)),
            )
          : null,
        pause.quorum ? h('span', { class: 'approvals' }, approvalsText(pause.quorum)) : null,
      ),
      h('span', { class: 'q' }, titleOf(pause)),
    ),
  );
}

const outcomeText: Record<string, string> = {
  completed: 'run completed',
  waiting: 'run asked again',
  cancelled: 'run cancelled',
};

/** Where a recent question stands, in words. */
export function statusText(record: RecentView): string {
  switch (record.status) {
    case 'resumed':
      return `resolved · ${outcomeText[record.outcome ?? ''] ?? 'resumed'}`;
    case 'answered':
      return 'answered · waiting for the run to resume';
    case 'failed':
      return 'answered · the run failed (runner retry makes it ready again)';
    case 'closed':
      return 'answered';
    case 'expired':
      return `expired · no answer before the deadline, its default applied · ${outcomeText[record.outcome ?? ''] ?? 'resuming'}`;
    default:
      return 'pending';
  }
}

/** "declined · not today", and who answered (all approvers of a quorum) when recorded. */
export function answerLine(record: RecentView) {
  if (!record.answer) return null;
  const by = answeredByText(record);
  return [
    h(
      'span',
      { class: `answer ${record.answer.action}` },
      h('strong', {}, actionWords[record.answer.action]),
      record.answer.content ? ` · ${record.answer.content}` : '',
    ),
    by ? h('span', { class: 'by' }, `by ${by}`) : null,
  ];
}

/** One row of the recent list. */
export function recentRow(record: RecentView, selected: boolean, open: () => void) {
  return h(
    'li',
    {
      class: `row recent-row status-${record.status}${selected ? ' selected' : ''}`,
      'data-token': record.token,
      'data-status': record.status,
      'data-outcome': record.outcome ?? '',
    },
    h(
      'button',
      {
        type: 'button',
        class: 'open',
        'aria-current': selected ? 'true' : undefined,
        onclick: open,
      },
      h(
        'span',
        { class: 'meta' },
        priorityBadge(record),
        ...labels(record),
        h('span', { class: `status ${record.status}` }, statusText(record)),
      ),
      h('span', { class: 'q' }, titleOf(record)),
      ...(answerLine(record) ?? []),
    ),
  );
}

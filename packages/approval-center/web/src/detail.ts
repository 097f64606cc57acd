import type {
  AnswerAction,
  ContextView,
  GatedView,
  PauseView,
  ReadOnlyReason,
} from '@x/approval-center/contract';
import { ApiError, api } from './api-client.js';
import { contextSlot } from './context-section.js';
import { askedWhen, type Child, h, replace } from './dom.js';
import { refresh } from './feed.js';
import { backButton, say, showView, ui } from './page.js';
import { labels, priorityBadge, sourcePart, titleOf, waitPart } from './rows.js';
import { schemaErrors } from './schema-check.js';
import { shown, shownJson } from './shown.js';
import { ageOf, answeredHere, changed, state } from './state.js';

/** One question's answer form: what its parts share. */
interface Form {
  pause: PauseView;
  /** An approval without options: a note instead of an answer, and "approve with changes". */
  approve: boolean;
  /** The answer (or the approval's note). */
  text: HTMLTextAreaElement;
  /** Where a refused or failed answer says why. */
  error: HTMLElement;
}

/** Shows the selected pending question with its answer form, or a hint when none is. */
export function renderDetail(): void {
  const pause = state.pending.find((p) => p.token === state.selected);
  // Keep what the operator is typing: rebuild only when another question is shown (its
  // deadline's time left and its approvals so far are brought up to date in place).
  if (pause?.token === state.detailFor && pause) {
    const fresh = waitPart(pause);
    if (fresh) ui.detail.querySelector('#wait')?.replaceWith(fresh);
    return;
  }
  state.detailFor = pause?.token;
  if (!pause) {
    replace(ui.detail, h('p', { class: 'hint' }, 'Select a question to answer it.'));
    return;
  }
  replace(ui.detail, ...detailOf(pause));
}

function detailOf(pause: PauseView): Child[] {
  const options = pause.options ?? [];
  const approve = pause.kind === 'approve' && options.length === 0;
  const form: Form = {
    pause,
    approve,
    text: h('textarea', {
      id: 'answer-text',
      rows: 3,
      placeholder: pause.gated
        ? 'Reason, if you decline'
        : approve
          ? 'Note (optional)'
          : 'Your answer',
    }),
    error: h('p', { class: 'error', role: 'alert' }),
  };
  const changes = pause.gated
    ? argumentsPart(form, pause.gated)
    : approve && !pause.fixedArguments
      ? changesPart(form)
      : undefined;
  const heading = [
    backButton(),
    h('h2', { class: 'question', id: 'detail-question' }, titleOf(pause)),
    h(
      'p',
      { class: 'meta' },
      priorityBadge(pause),
      ...labels(pause),
      h('span', { class: 'age' }, askedWhen(ageOf(pause))),
    ),
    sourcePart(pause),
    whyPart(pause),
    waitPart(pause),
  ];
  // What the server says this operator may not answer gets no answer form at all.
  if (!pause.canAnswer) {
    return [
      ...heading,
      contextSlot(pause.token),
      h(
        'p',
        { class: 'read-only', id: 'read-only', 'data-reason': pause.readOnly ?? undefined },
        `Read only: ${readOnlyWords[pause.readOnly ?? 'audience']}`,
      ),
    ];
  }
  const stop = state.access === 'admin' ? stopPart(form) : undefined;
  return [
    ...heading,
    contextSlot(pause.token, changes?.follow),
    options.length ? optionButtons(form, options) : null,
    h(
      'label',
      { class: 'answer-label', for: 'answer-text' },
      options.length ? 'Or answer in your own words' : 'Answer',
    ),
    form.text,
    h(
      'div',
      { class: 'actions' },
      sendButton(form),
      changes?.openButton,
      button('decline', 'Decline', () => answer(form, 'decline', form.text.value.trim())),
      button('cancel', 'Cancel run', () => answer(form, 'cancel', ''), {
        title: 'End the run without resuming it',
      }),
      stop?.openButton,
    ),
    changes?.box,
    pause.fixedArguments
      ? h(
          'p',
          { class: 'fixed-arguments', id: 'fixed-arguments' },
          'The arguments of this call cannot be edited: approve or decline.',
        )
      : null,
    stop?.box,
    form.error,
  ];
}

/**
 * Why a policy asked the question: its reason (which names its rules), the rules as ids, the
 * set's hash (short; whole in its tooltip) and, when deciding failed, why (the admins were asked).
 */
function whyPart(pause: PauseView) {
  const { policy } = pause;
  if (!policy) return null;
  const hash = policy.policyHash.replace(/^sha256:/, '');
  return h(
    'div',
    { class: 'why', id: 'why' },
    h('p', { class: 'reason' }, h('strong', {}, 'Why asked: '), shown(policy.reason)),
    policy.ruleIds.length > 0
      ? h(
          'p',
          { class: 'rules' },
          policy.ruleIds.length === 1 ? 'Rule ' : 'Rules ',
          ...policy.ruleIds.flatMap((id, i) => [i > 0 ? ', ' : '', h('code', {}, shown(id, true))]),
          ' · policy set ',
          h('code', { title: policy.policyHash }, hash.slice(0, 12)),
        )
      : null,
    policy.error
      ? h(
          'p',
          { class: 'error policy-error' },
          'Deciding failed, so the admins are asked: ',
          shown(policy.error),
        )
      : null,
  );
}

/** Why the server says this operator may only read a question, in their words. */
const readOnlyWords: Record<ReadOnlyReason, string> = {
  viewer: 'you are a viewer: viewers read questions, they do not answer them.',
  audience: 'its audience does not include you or a role of yours.',
  requester:
    'you asked for this, and its requester may not answer it (separation of duties): another operator of its audience does.',
};

const doneWords: Record<AnswerAction, string> = {
  accept: 'Answered',
  decline: 'Declined',
  cancel: 'Cancelled',
};

/** Sends the answer; then the next question, ready for the keyboard (on a phone, the queue). */
async function answer(form: Form, action: AnswerAction, content: string): Promise<void> {
  const { pause, error } = form;
  error.textContent = '';
  try {
    answeredHere.add(pause.token);
    const { recorded } = await api.answer(pause.token, action, content);
    const done = action === 'accept' && form.approve ? 'Approved' : doneWords[action];
    // A partial approval of a quorum: recorded, and the question stays for the others.
    say(
      recorded
        ? `${done} “${titleOf(pause)}”: ${recorded.message}`
        : `${done} “${titleOf(pause)}” in ${pause.conversationId}`,
    );
    state.pending = state.pending.filter((p) => p.token !== pause.token);
    state.selected = undefined;
    changed();
    showView('queue');
    ui.list.querySelector<HTMLElement>('li.selected button.open')?.focus();
    await refresh();
  } catch (e) {
    error.textContent = e instanceof ApiError ? e.message : String(e);
    // Answered or gone meanwhile: show the lists as they are now.
    if (e instanceof ApiError && (e.status === 404 || e.status === 409)) await refresh();
  }
}

/**
 * Stop conversation, for an admin only: the first click asks, naming what the stop cancels
 * (the run, the open questions the page lists); only the confirm sends it.
 */
function stopPart({ pause, error }: Form) {
  const conversation = pause.conversationId;
  const open = state.pending.filter((p) => p.conversationId === conversation);
  const text = h(
    'p',
    { id: 'stop-what' },
    `Stop conversation ${conversation}? This cancels its run (it is not resumed) and closes its `,
    open.length === 1 ? '1 open question' : `${open.length} open questions`,
    `: ${open.map((p) => `“${titleOf(p)}”`).join(', ')}.`,
  );
  const send = async () => {
    error.textContent = '';
    try {
      const { pauses } = await api.stop(conversation);
      say(`Stopped ${conversation}: ${pauses} question(s) closed`);
      await refresh();
    } catch (e) {
      error.textContent = e instanceof Error ? e.message : String(e);
    }
  };
  const keep = () => {
    box.hidden = true;
    openButton.setAttribute('aria-expanded', 'false');
    openButton.focus();
  };
  const box = h(
    'div',
    { class: 'changes stop-confirm', id: 'stop-confirm', role: 'group', hidden: true },
    text,
    button('stop-confirm-send', `Stop ${conversation}`, () => void send(), { class: 'danger' }),
    button('stop-keep', 'Do not stop', keep),
  );
  const openButton = button(
    'stop',
    'Stop conversation',
    () => {
      box.hidden = false;
      openButton.setAttribute('aria-expanded', 'true');
      box.querySelector<HTMLElement>('#stop-keep')?.focus();
    },
    { class: 'danger', 'aria-expanded': 'false', 'aria-controls': 'stop-confirm' },
  );
  return { box, openButton };
}

function button(
  id: string,
  label: string,
  onclick: (event: Event) => void,
  props: Record<string, string> = {},
) {
  return h('button', { type: 'button', id, ...props, onclick }, label);
}

/** A button per option, as the asking app gave it: its words (a label) and its description. */
function optionButtons(form: Form, options: NonNullable<PauseView['options']>) {
  return h(
    'div',
    { class: 'options', role: 'group', 'aria-label': 'Options' },
    ...options.map((option, i) => {
      const { label, description } =
        typeof option === 'string' ? { label: option, description: null } : option;
      return h(
        'button',
        {
          type: 'button',
          class: 'option',
          'data-option': i + 1,
          onclick: () => answer(form, 'accept', label),
        },
        h('kbd', {}, String(i + 1)),
        ' ',
        label,
        description ? h('span', { class: 'option-description' }, description) : null,
      );
    }),
  );
}

function sendButton(form: Form) {
  const send = () => {
    // A gated call approved as asked: its content is empty (the arguments are its answer).
    if (form.pause.gated) return void answer(form, 'accept', '');
    const content = form.text.value.trim() || (form.approve ? 'approved' : '');
    if (!content) {
      form.error.textContent = 'Type an answer first (or choose an option).';
      form.text.focus();
      return;
    }
    void answer(form, 'accept', content);
  };
  return button('send', form.approve ? 'Approve' : 'Send answer', send, { class: 'primary' });
}

/**
 * Approve with changes: the edited action is the accepted content the model reads. The box
 * starts from the question, then from the proposed action once the context has it.
 */
function changesPart(form: Form) {
  const changes = h('textarea', { id: 'changes-text', rows: 3 });
  changes.value = form.pause.question.replace(/^Approve: /, '').replace(/\?( \(.*\))?$/s, '');
  const send = () => {
    const edited = changes.value.trim();
    if (!edited) {
      form.error.textContent = 'Write the approved action first.';
      changes.focus();
      return;
    }
    // @x/executive's CHANGED_APPROVAL_PREFIX: kinds that cannot change arguments refuse such calls.
    void answer(form, 'accept', `approved with changes: ${edited}`);
  };
  const box = h(
    'div',
    { class: 'changes', hidden: true },
    h(
      'label',
      { for: 'changes-text' },
      'Approve with these changes (the model reads them as what you approved)',
    ),
    changes,
    button('send-changes', 'Approve with these changes', send, { class: 'primary' }),
  );
  const open = (event: Event) => {
    box.hidden = false;
    (event.currentTarget as HTMLElement).setAttribute('aria-expanded', 'true');
    changes.focus();
  };
  const openButton = button('approve-edit', 'Approve with changes', open, {
    'aria-expanded': 'false',
    'aria-controls': 'changes-text',
  });
  const follow = (context: ContextView) => {
    const action = (context.toolCall?.input as { action?: unknown } | null)?.action;
    if (typeof action === 'string' && document.activeElement !== changes) changes.value = action;
  };
  return { box, openButton, follow };
}

/**
 * Edit, then approve a gated call: its arguments as JSON, checked against the tool's schema
 * (from the API) before they are sent; the server runs what was sent, or refuses it.
 */
function argumentsPart(form: Form, gated: GatedView) {
  const edit = h('textarea', { id: 'arguments-text', rows: 8, spellcheck: 'false' });
  edit.value = shownJson(JSON.stringify(gated.arguments, null, 2));
  const send = () => {
    let edited: unknown;
    try {
      edited = JSON.parse(edit.value);
    } catch {
      form.error.textContent = `The arguments are not JSON: write them as a JSON object.`;
      edit.focus();
      return;
    }
    const errors = schemaErrors(gated.schema, edited);
    if (errors.length > 0) {
      form.error.textContent = `Not sent, the arguments do not fit ${gated.tool}: ${errors.join('; ')}`;
      edit.focus();
      return;
    }
    void answer(form, 'accept', JSON.stringify(edited));
  };
  const box = h(
    'div',
    { class: 'changes', hidden: true },
    h('label', { for: 'arguments-text' }, `The arguments ${gated.tool} runs with, once approved`),
    edit,
    button('send-arguments', 'Approve with these arguments', send, { class: 'primary' }),
  );
  const open = (event: Event) => {
    box.hidden = false;
    (event.currentTarget as HTMLElement).setAttribute('aria-expanded', 'true');
    edit.focus();
  };
  const openButton = button('approve-edit', 'Edit arguments, then approve', open, {
    'aria-expanded': 'false',
    'aria-controls': 'arguments-text',
  });
  return { box, openButton, follow: undefined };
}

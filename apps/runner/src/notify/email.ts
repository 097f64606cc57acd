import { createTransport } from 'nodemailer';
import type { Storage } from '../storage/index.js';
import type { NotificationRecord } from '../storage/notifications.js';
import { LINK_TTL_MS, linkAnswerer, shownDigest, signDecision } from './decision-link.js';
import { eventDataOf } from './events.js';
import { escapeHtml } from './html.js';
import type { Sender } from './sender.js';

/** Where email notifications go, and the page they point to. */
export interface EmailTarget {
  /** The SMTP server (RUNNER_SMTP_URL). */
  url: string;
  from: string;
  to: readonly string[];
  /** The approval center's address (RUNNER_PUBLIC_URL), for the link to the question. */
  publicUrl?: string | undefined;
  /** Signs one decision link per answer and recipient (RUNNER_DECISION_KEY, with publicUrl). */
  decisionKey?: string | undefined;
}

/** A link per answer: `label`, and the URL of its confirmation page. */
type DecisionLinks = Array<{ label: string; url: string }>;

/** The decision links of a new question for recipient `to`: each option (or accept) and decline. */
function decisionLinks(n: NotificationRecord, target: EmailTarget, to: string): DecisionLinks {
  const data = eventDataOf(n.payload);
  const { decisionKey: key, publicUrl } = target;
  if (!key || !publicUrl || n.kind !== 'question.created' || !data.token) return [];
  const deadline = data.deadline ? Date.parse(data.deadline.at) : Number.POSITIVE_INFINITY;
  const expiresAt = Math.min(Date.now() + LINK_TTL_MS, deadline);
  const shown = shownDigest({ question: data.question ?? '', options: data.options ?? null });
  const options = Array.isArray(data.options) ? data.options.map(String) : [];
  const accepts = options.length ? options : [''];
  const answers: Array<{
    label: string;
    answer: { action: 'accept' | 'decline'; content: string };
  }> = [
    ...accepts.map((o) => ({
      label: o || 'accept',
      answer: { action: 'accept' as const, content: o },
    })),
    { label: 'decline', answer: { action: 'decline', content: '' } },
  ];
  return answers.map(({ label, answer }) => {
    const link = signDecision(key, { token: data.token ?? '', to, answer, shown, expiresAt });
    return { label, url: new URL(`decide?link=${link}`, publicUrl).href };
  });
}

/**
 * The subject, text and HTML of one notification's email: the question, its context, how to
 * answer. The HTML says the same, its decision links as buttons, every value escaped.
 */
export function emailOf(
  n: NotificationRecord,
  publicUrl?: string,
  links: DecisionLinks = [],
): { subject: string; text: string; html: string } {
  const data = eventDataOf(n.payload);
  const about = data.question ?? data.runId ?? '';
  const facts = [
    data.question ? `Question: ${data.question}` : `Run: ${data.runId}`,
    `Event: ${n.kind}`,
    `Conversation: ${data.conversationId ?? ''}`,
  ];
  if (data.tool) facts.push(`Tool: ${data.tool}, priority ${data.priority ?? 0}`);
  if (data.error) facts.push(`Error: ${data.error}`);
  if (data.answer) {
    const content = data.answer.content ? ` "${data.answer.content}"` : '';
    facts.push(`Answer: ${data.answer.action}${content} by ${data.answeredBy ?? 'someone'}`);
  }
  const commands: string[] = [];
  const asks = n.kind === 'question.created' && data.token !== undefined;
  if (asks) {
    const options = Array.isArray(data.options) ? (data.options as unknown[]) : [];
    for (const [i, option] of options.entries()) {
      commands.push(`${String(option)}: runner answer ${data.token} --option ${i + 1}`);
    }
    commands.push(`runner answer ${data.token} --accept TEXT | --decline`);
  }
  const lines = [...facts];
  if (asks) {
    lines.push('', 'To answer:');
    for (const link of links) lines.push(`  ${link.label}: ${link.url}`);
    if (publicUrl) lines.push(`  the approval center: ${publicUrl}`);
    lines.push(...commands.map((command) => `  ${command}`));
  }
  return {
    subject: `[runner] ${n.kind}: ${about}`.slice(0, 200),
    text: `${lines.join('\n')}\n`,
    html: emailHtml(facts, asks ? { links, publicUrl, commands } : undefined),
  };
}

const BUTTON =
  'display:inline-block;margin:0 8px 8px 0;padding:8px 16px;border-radius:6px;background:#1f5fbf;color:#ffffff;text-decoration:none;font-weight:bold';

/** The HTML part of {@link emailOf}: its facts, then how to answer (links as buttons). */
function emailHtml(
  facts: readonly string[],
  answer?: { links: DecisionLinks; publicUrl: string | undefined; commands: readonly string[] },
): string {
  const parts = facts.map((fact) => `<p style="margin:0 0 6px">${escapeHtml(fact)}</p>`);
  if (answer) {
    parts.push('<p style="margin:16px 0 8px"><strong>To answer:</strong></p>');
    const buttons = answer.links.map(
      ({ label, url }) => `<a href="${escapeHtml(url)}" style="${BUTTON}">${escapeHtml(label)}</a>`,
    );
    if (buttons.length > 0) parts.push(`<p>${buttons.join(' ')}</p>`);
    if (answer.publicUrl) {
      const url = escapeHtml(answer.publicUrl);
      parts.push(`<p>The approval center: <a href="${url}">${url}</a></p>`);
    }
    for (const command of answer.commands) parts.push(`<p><code>${escapeHtml(command)}</code></p>`);
  }
  return `<!doctype html><html><body style="font-family:sans-serif;font-size:14px">${parts.join('\n')}</body></html>\n`;
}

/**
 * The recipients of `n` who may answer its question, as the store will decide it when they
 * do ({@link linkAnswerer}): anyone when the audience names no one, else those it names and
 * live operators with a role it names, and admins. Only they get decision links; the others
 * get the notice alone.
 */
async function answerers(
  n: NotificationRecord,
  storage: Storage,
  to: readonly string[],
): Promise<Set<string>> {
  const { names = [], roles = [] } = eventDataOf(n.payload).audience ?? {};
  const operators = await storage.operators().list();
  return new Set(
    to.filter((address) => {
      let as: ReturnType<typeof linkAnswerer>;
      try {
        as = linkAnswerer(operators, address);
      } catch {
        return false;
      }
      if (!as.identity || (names.length === 0 && roles.length === 0)) return true;
      return names.includes(address) || (as.identity.roles ?? []).some((r) => roles.includes(r));
    }),
  );
}

/**
 * A sender of email notifications over SMTP (nodemailer). The Message-ID is made of the
 * event id, so a mail system that saw an event's message before can drop a repeat.
 */
export function emailSender(target: EmailTarget): Sender {
  const transport = createTransport(target.url);
  return async (n, storage) => {
    const perRecipient = target.decisionKey !== undefined && target.publicUrl !== undefined;
    // Decision links name the person they were sent to: then each recipient gets their own.
    const batches = perRecipient ? target.to.map((to) => [to]) : [[...target.to]];
    const linked = perRecipient && n.kind === 'question.created';
    const mayAnswer = linked ? await answerers(n, storage, target.to) : new Set<string>();
    for (const [i, to] of batches.entries()) {
      const recipient = to[0] ?? '';
      const links = mayAnswer.has(recipient) ? decisionLinks(n, target, recipient) : [];
      await transport.sendMail({
        from: target.from,
        to,
        messageId: `<${n.eventId}${batches.length > 1 ? `.${i}` : ''}@runner>`,
        ...emailOf(n, target.publicUrl, links),
      });
    }
  };
}

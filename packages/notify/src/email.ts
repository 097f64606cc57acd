import type { NotificationRecord } from '@x/askuser';
import { LINK_TTL_MS, shownDigest, signDecisionLink } from './decision-link.js';
import { NotifyError } from './errors.js';
import { eventDataOf, optionLabels } from './event-data.js';
import { escapeHtml } from './html.js';
import type { Sender } from './sender.js';

/** One message as {@link EmailTransport.sendMail} takes it (nodemailer's fields). */
export interface EmailMessage {
  from: string;
  to: string[];
  messageId: string;
  subject: string;
  text: string;
  html: string;
}

/** What sends the messages: a nodemailer transport, or anything with its `sendMail`. */
export interface EmailTransport {
  sendMail(message: EmailMessage): Promise<unknown>;
}

/** Where email notifications go, and the page they point to. */
export interface EmailTarget {
  /** The SMTP server's URL (`smtp://host:25`), for a nodemailer transport made once. */
  url?: string | undefined;
  /** The transport to send with instead of {@link url} (e.g. your own nodemailer transport). */
  transport?: EmailTransport | undefined;
  from: string;
  to: readonly string[];
  /** The approval center's address, for the link to the question and the decision links. */
  publicUrl?: string | undefined;
  /** Signs one decision link per answer and recipient (with {@link publicUrl}). */
  decisionKey?: string | undefined;
  /**
   * The recipients of a new question who may answer it: only they get decision links, the
   * others the notice alone. Default: every recipient. Who may answer is yours to decide.
   */
  mayAnswer?: (n: NotificationRecord, to: readonly string[]) => Promise<ReadonlySet<string>>;
  /** The lines that tell how else to answer question `token` (e.g. a CLI's commands); default none. */
  answerCommands?: (token: string, options: readonly string[]) => string[];
  /** The subject's prefix; default `[notify]`. */
  subjectPrefix?: string;
  /** The Message-ID's domain (`<event-id@domain>`); default `notify`. */
  messageIdDomain?: string;
}

/** A link per answer: `label`, and the URL of its confirmation page. */
export type DecisionLinks = Array<{ label: string; url: string }>;

/** The decision links of a new question for recipient `to`: each option (or accept) and decline. */
function decisionLinks(n: NotificationRecord, target: EmailTarget, to: string): DecisionLinks {
  const data = eventDataOf(n.payload);
  const { decisionKey: key, publicUrl } = target;
  if (!key || !publicUrl || n.kind !== 'question.created' || !data.token) return [];
  const deadline = data.deadline ? Date.parse(data.deadline.at) : Number.POSITIVE_INFINITY;
  const expiresAt = Math.min(Date.now() + LINK_TTL_MS, deadline);
  const shown = shownDigest({ question: data.question ?? '', options: data.options ?? null });
  const options = optionLabels(data.options);
  const answers = [
    ...(options.length ? options : ['']).map((o) => ({
      label: o || 'accept',
      answer: { action: 'accept' as const, content: o },
    })),
    { label: 'decline', answer: { action: 'decline' as const, content: '' } },
  ];
  return answers.map(({ label, answer }) => {
    const link = signDecisionLink(key, { token: data.token ?? '', to, answer, shown, expiresAt });
    return { label, url: new URL(`decide?link=${link}`, publicUrl).href };
  });
}

/** The facts of a notification's email, a line each. */
function factsOf(n: NotificationRecord): string[] {
  const data = eventDataOf(n.payload);
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
  return facts;
}

/** Options of {@link emailOf}. */
export interface EmailContent {
  publicUrl?: string | undefined;
  links?: DecisionLinks;
  answerCommands?: EmailTarget['answerCommands'];
  subjectPrefix?: string;
}

/**
 * The subject, text and HTML of one notification's email: the question, its context, how to
 * answer. The HTML says the same, its decision links as buttons, every value escaped.
 */
export function emailOf(
  n: NotificationRecord,
  content: EmailContent = {},
): { subject: string; text: string; html: string } {
  const { publicUrl, links = [] } = content;
  const data = eventDataOf(n.payload);
  const facts = factsOf(n);
  const asks = n.kind === 'question.created' && data.token !== undefined;
  const commands =
    asks && data.token
      ? (content.answerCommands?.(data.token, optionLabels(data.options)) ?? [])
      : [];
  const lines = [...facts];
  if (asks) {
    lines.push('', 'To answer:');
    for (const link of links) lines.push(`  ${link.label}: ${link.url}`);
    if (publicUrl) lines.push(`  the approval center: ${publicUrl}`);
    lines.push(...commands.map((command) => `  ${command}`));
  }
  const about = data.question ?? data.runId ?? '';
  return {
    subject: `${content.subjectPrefix ?? '[notify]'} ${n.kind}: ${about}`.slice(0, 200),
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

/** The transport of `target`: its own, or one nodemailer transport made from its URL. */
function transportOf(target: EmailTarget): EmailTransport {
  if (target.transport) return target.transport;
  if (!target.url) {
    throw new NotifyError('invalid_argument', 'an email sender needs `url` or `transport`');
  }
  return emailTransport(target.url);
}

/**
 * A sender of email notifications over SMTP (nodemailer). The Message-ID is made of the
 * event id, so a mail system that saw an event's message before can drop a repeat. With a
 * decision key and a public URL, each recipient gets a message of their own, with decision
 * links when {@link EmailTarget.mayAnswer} counts them in.
 *
 * @example
 * const email = emailSender({ url: 'smtp://127.0.0.1:2525', from: 'approvals@example.com', to: ['ana@example.com'] });
 */
export function emailSender(target: EmailTarget): Sender {
  const transport = transportOf(target);
  const domain = target.messageIdDomain ?? 'notify';
  const perRecipient = target.decisionKey !== undefined && target.publicUrl !== undefined;
  return async (n) => {
    // Decision links name the person they were sent to: then each recipient gets their own.
    const batches = perRecipient ? target.to.map((to) => [to]) : [[...target.to]];
    const linked = perRecipient && n.kind === 'question.created';
    const mayAnswer = !linked
      ? new Set<string>()
      : ((await target.mayAnswer?.(n, target.to)) ?? new Set(target.to));
    for (const [i, to] of batches.entries()) {
      const recipient = to[0] ?? '';
      const links = mayAnswer.has(recipient) ? decisionLinks(n, target, recipient) : [];
      try {
        await transport.sendMail({
          from: target.from,
          to,
          messageId: `<${n.eventId}${batches.length > 1 ? `.${i}` : ''}@${domain}>`,
          ...emailOf(n, { ...target, links }),
        });
      } catch (error) {
        throw new NotifyError('undelivered', (error as Error).message, {
          channel: 'email',
          cause: error,
        });
      }
    }
  };
}

/**
 * A nodemailer transport of the SMTP server at `url` (`smtp://host:25`), made on the first
 * message: importing this package does not load nodemailer.
 */
export function emailTransport(url: string): EmailTransport {
  let transport: Promise<EmailTransport> | undefined;
  return {
    async sendMail(message) {
      transport ??= import('nodemailer').then((m) => m.createTransport(url) as EmailTransport);
      return (await transport).sendMail(message);
    },
  };
}

import { createTransport } from 'nodemailer';
import type { NotificationRecord } from '../storage/notifications.js';

/** Where email notifications go, and the page they point to. */
export interface EmailTarget {
  /** The SMTP server (RUNNER_SMTP_URL). */
  url: string;
  from: string;
  to: readonly string[];
  /** The approval center's address (RUNNER_PUBLIC_URL), for the link to the question. */
  publicUrl?: string | undefined;
}

interface EventData {
  token?: string;
  conversationId?: string;
  tool?: string;
  question?: string;
  options?: unknown;
  priority?: number;
  runId?: string;
  error?: string;
  answer?: { action: string; content: string };
  answeredBy?: string | null;
}

/** The subject and text of one notification's email: the question, its context, how to answer. */
export function emailOf(
  n: NotificationRecord,
  publicUrl?: string,
): { subject: string; text: string } {
  const data = ((n.payload as { data?: EventData } | null)?.data ?? {}) as EventData;
  const about = data.question ?? data.runId ?? '';
  const lines = [
    data.question ? `Question: ${data.question}` : `Run: ${data.runId}`,
    `Event: ${n.kind}`,
    `Conversation: ${data.conversationId ?? ''}`,
  ];
  if (data.tool) lines.push(`Tool: ${data.tool}, priority ${data.priority ?? 0}`);
  if (data.error) lines.push(`Error: ${data.error}`);
  if (data.answer) {
    const content = data.answer.content ? ` "${data.answer.content}"` : '';
    lines.push(`Answer: ${data.answer.action}${content} by ${data.answeredBy ?? 'someone'}`);
  }
  if (n.kind === 'question.created' && data.token) {
    const options = Array.isArray(data.options) ? (data.options as unknown[]) : [];
    lines.push('', 'To answer:');
    if (publicUrl) lines.push(`  the approval center: ${publicUrl}`);
    for (const [i, option] of options.entries()) {
      lines.push(`  ${String(option)}: runner answer ${data.token} --option ${i + 1}`);
    }
    lines.push(`  runner answer ${data.token} --accept TEXT | --decline`);
  }
  return { subject: `[runner] ${n.kind}: ${about}`.slice(0, 200), text: `${lines.join('\n')}\n` };
}

/**
 * A sender of email notifications over SMTP (nodemailer). The Message-ID is made of the
 * event id, so a mail system that saw an event's message before can drop a repeat.
 */
export function emailSender(target: EmailTarget): (n: NotificationRecord) => Promise<void> {
  const transport = createTransport(target.url);
  return async (n) => {
    await transport.sendMail({
      from: target.from,
      to: [...target.to],
      messageId: `<${n.eventId}@runner>`,
      ...emailOf(n, target.publicUrl),
    });
  };
}

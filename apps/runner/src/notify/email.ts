import { linkAnswerer } from '@x/approval-center';
import type { NotificationRecord } from '@x/askuser';
import { emailTransport, eventDataOf, emailSender as notifyEmailSender } from '@x/notify';
import type { Storage } from '../storage/index.js';
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

/** The `runner answer` commands that answer question `token`: each option, or any text. */
function answerCommands(token: string, options: readonly string[]): string[] {
  return [
    ...options.map((option, i) => `${option}: runner answer ${token} --option ${i + 1}`),
    `runner answer ${token} --accept TEXT | --decline`,
  ];
}

/**
 * @x/notify's email sender as the runner sends it: `[runner]` subjects and Message-IDs, the
 * `runner answer` commands, and decision links only for the recipients who may answer.
 */
export function emailSender(target: EmailTarget): Sender {
  const transport = emailTransport(target.url);
  return (n, storage) =>
    notifyEmailSender({
      ...target,
      transport,
      subjectPrefix: '[runner]',
      messageIdDomain: 'runner',
      answerCommands,
      mayAnswer: (question, to) => answerers(question, storage, to),
    })(n);
}

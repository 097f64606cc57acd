import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A real SMTP server on 127.0.0.1 that keeps each message it receives, raw. */
export interface SmtpReceiver {
  /** The server's URL, e.g. for nodemailer or RUNNER_SMTP_URL. */
  url: string;
  messages: string[];
  close(): Promise<void>;
}

/** Starts an {@link SmtpReceiver} on a free port (no TLS, no authentication). */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: string[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, _session, callback) {
      let raw = '';
      stream.on('data', (chunk) => {
        raw += chunk;
      });
      stream.on('end', () => {
        messages.push(raw);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    messages,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}

/** A quoted-printable body as text: soft line breaks joined, =XX escapes decoded. */
export const unquote = (text: string) =>
  text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

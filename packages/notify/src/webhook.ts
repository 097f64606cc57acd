import { createHmac } from 'node:crypto';
import { NotifyError } from './errors.js';
import type { Sender } from './sender.js';

/**
 * The Standard Webhooks signature header of `body`: `v1,` and the base64 HMAC-SHA256 of
 * `id.timestamp.body` under each secret, separated by spaces (two during a rotation).
 */
export function webhookSignature(
  secrets: readonly Uint8Array[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets
    .map(
      (key) =>
        `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`,
    )
    .join(' ');
}

/** Where and how a webhook is sent. */
export interface WebhookTarget {
  url: string;
  /** The signing secrets (the bytes after `whsec_`, decoded); none: unsigned. */
  secrets: readonly Uint8Array[];
  /** How long a receiver may take to answer, in ms; default 10 s. */
  timeoutMs?: number;
}

/** The `fetch` failure's own reason (`ECONNREFUSED`), not undici's `fetch failed`. */
function connectionReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/**
 * POSTs one notification's `payload` with the Standard Webhooks headers (`webhook-id` is the
 * event id, the receiver's idempotency key). A 2xx is delivered; a redirect is not followed.
 * @throws {NotifyError} `undelivered`, saying why: the status and the start of the body, or
 *   the connection's failure.
 */
export async function sendWebhook(
  target: WebhookTarget,
  eventId: string,
  payload: unknown,
): Promise<void> {
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
  };
  if (target.secrets.length > 0) {
    headers['webhook-signature'] = webhookSignature(target.secrets, eventId, timestamp, body);
  }
  let response: Response;
  try {
    response = await fetch(target.url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(target.timeoutMs ?? 10_000),
      redirect: 'manual',
    });
  } catch (error) {
    throw new NotifyError('undelivered', `webhook ${target.url}: ${connectionReason(error)}`, {
      channel: 'webhook',
      cause: error,
    });
  }
  if (response.ok) {
    await response.body?.cancel();
    return;
  }
  const text = (await response.text().catch(() => '')).slice(0, 200).replace(/\s+/g, ' ');
  throw new NotifyError(
    'undelivered',
    `webhook ${target.url} answered ${response.status}${text ? `: ${text}` : ''}`,
    { channel: 'webhook', status: response.status },
  );
}

/**
 * A sender that POSTs each notification's payload to `target` ({@link sendWebhook}).
 *
 * @example
 * const webhook = webhookSender({ url: 'https://example.com/hooks', secrets: [secret] });
 */
export function webhookSender(target: WebhookTarget): Sender {
  return (n) => sendWebhook(target, n.eventId, n.payload);
}

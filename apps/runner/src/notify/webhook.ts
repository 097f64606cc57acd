import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks signature header of `body`: `v1,` and the base64 HMAC-SHA256 of
 * `id.timestamp.body` under each secret, separated by spaces (two during a rotation).
 */
export function webhookSignature(
  secrets: readonly Buffer[],
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
  /** The signing secrets; none: unsigned. */
  secrets: readonly Buffer[];
  /** How long a receiver may take to answer, in ms. */
  timeoutMs: number;
}

/**
 * POSTs one notification's `payload` with the Standard Webhooks headers (`webhook-id` is the
 * event id, the receiver's idempotency key). A 2xx is delivered.
 * @throws an error saying why it was not: the status and the start of the body, or the
 *   connection's failure.
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
      signal: AbortSignal.timeout(target.timeoutMs),
      redirect: 'manual',
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(
      `webhook ${target.url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
    );
  }
  if (response.ok) {
    await response.body?.cancel();
    return;
  }
  const text = (await response.text().catch(() => '')).slice(0, 200).replace(/\s+/g, ' ');
  throw new Error(`webhook ${target.url} answered ${response.status}${text ? `: ${text}` : ''}`);
}

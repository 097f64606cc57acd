import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long a signed Slack request stays valid: five minutes either way. */
export const SLACK_WINDOW_S = 300;

/**
 * Whether a request to the interactivity endpoint is Slack's: `signature`
 * (`x-slack-signature`) is `v0=` and the hex HMAC-SHA256 of `v0:TIMESTAMP:BODY` under the
 * signing secret, with `timestamp` (`x-slack-request-timestamp`) within
 * {@link SLACK_WINDOW_S} of now (no replay). Pass the raw body, before parsing.
 *
 * @example
 * if (!slackSigned(secret, req.headers['x-slack-request-timestamp'], req.headers['x-slack-signature'], raw)) {
 *   res.writeHead(401).end();
 * }
 */
export function slackSigned(
  secret: string,
  timestamp: string,
  signature: string,
  body: string,
  now = Date.now(),
): boolean {
  const at = Number(timestamp);
  if (!Number.isInteger(at) || Math.abs(now / 1000 - at) > SLACK_WINDOW_S) return false;
  const want = Buffer.from(
    `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`,
  );
  const given = Buffer.from(signature);
  return want.length === given.length && timingSafeEqual(want, given);
}

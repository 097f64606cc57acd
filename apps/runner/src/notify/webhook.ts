// The Standard Webhooks channel is @x/notify's; the runner's callers keep this path.
export { sendWebhook, type WebhookTarget, webhookSignature } from '@x/notify';

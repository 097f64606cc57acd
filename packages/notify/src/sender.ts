import type { NotificationRecord } from '@x/askuser';

/**
 * Sends one notification on its channel; throws why it was not delivered (a
 * {@link NotifyError} `undelivered` from this package's senders).
 */
export type Sender = (notification: NotificationRecord) => Promise<void>;

import type { Storage } from '../storage/index.js';
import type { NotificationRecord } from '../storage/notifications.js';

/**
 * Sends one notification on its channel (`storage` keeps what the channel needs, e.g. where
 * a Slack message was posted); throws why it was not delivered.
 */
export type Sender = (notification: NotificationRecord, storage: Storage) => Promise<void>;

import type { NotificationRecord } from '@x/askuser';
import type { Storage } from '../storage/index.js';

/**
 * Sends one notification on its channel (`storage` keeps what the channel needs, e.g. where
 * a Slack message was posted); throws why it was not delivered.
 */
export type Sender = (notification: NotificationRecord, storage: Storage) => Promise<void>;

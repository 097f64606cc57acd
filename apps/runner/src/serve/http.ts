import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Storage } from '../storage/index.js';

/**
 * A route of a channel outside the API (a decision link, Slack's interactivity), with its own
 * credential: true when it answered the request.
 */
export type ChannelRoute = (
  storage: Storage,
  answered: () => void,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) => Promise<boolean>;

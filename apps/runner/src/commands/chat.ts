import { runChat } from '../chat/session.js';
import type { Command } from './command.js';

/** `runner chat`: the interactive mode. */
export const chat: Command = (ctx, args) => runChat(ctx, args);

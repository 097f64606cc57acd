import { runChat } from '../chat.js';
import type { Command } from './context.js';

/** `runner chat`: the interactive mode. */
export const chat: Command = (ctx, args) => runChat(ctx, args);

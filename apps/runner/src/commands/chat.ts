import { parseArgs } from 'node:util';
import { isSafeThreadId } from '@x/session';
import { listSessions } from '../chat/saved-sessions.js';
import { runChat } from '../chat/session.js';
import { usageError } from '../errors.js';
import { type Command, globalOptions, withStorage } from './command.js';

/** `runner chat`: the interactive mode. */
export const chat: Command = async (ctx, args) => {
  const { values } = parseArgs({
    args,
    options: {
      ...globalOptions,
      session: { type: 'string' },
      resume: { type: 'boolean' },
      list: { type: 'boolean' },
    },
  });
  if (values.list) {
    if (values.session !== undefined || values.resume)
      throw usageError('chat --list takes no --session or --resume');
    return withStorage(ctx, (storage) => listSessions(ctx.out, storage));
  }
  if (values.session !== undefined && !isSafeThreadId(values.session)) {
    throw usageError(
      `--session "${values.session}" cannot name a session: use 1 to 200 letters, digits, '.', '_' and '-', not starting with '.'`,
    );
  }
  return runChat(ctx, {
    session: values.session,
    resume: values.resume ?? false,
    model: values.model,
  });
};

import { type Message, toolUses } from '@x/wire';
import { ContinuationError } from './errors.js';

/**
 * Enforces the invariant that makes a resume exact: the suspending tool must be the SOLE
 * tool use of its assistant message. Otherwise a sibling tool call of the same batch would
 * be silently dropped on resume, or run twice. Stores call it on `save`, so the error
 * surfaces at suspend time rather than as corruption at resume.
 *
 * @throws {ContinuationError} `not_singleton` unless `message` is an assistant message whose
 *   only `tool_use` has the id `toolUseId`.
 * @example
 * validateSingletonSuspension(assistant, 'toolu_ask_1'); // throws if the model called two tools
 */
export function validateSingletonSuspension(message: Message, toolUseId: string): void {
  if (message.role !== 'assistant') {
    throw new ContinuationError(
      'not_singleton',
      `the suspending message must be an assistant message, got role "${message.role}"`,
      { field: 'assistant.role' },
    );
  }
  const uses = toolUses(message);
  if (!uses.some((use) => use.id === toolUseId)) {
    throw new ContinuationError(
      'not_singleton',
      `tool_use "${toolUseId}" is not a tool use of the assistant message (it has ${
        uses.length === 0 ? 'none' : uses.map((u) => `"${u.id}"`).join(', ')
      }): suspend on a tool use of the message you save`,
      { field: 'tool_use_id' },
    );
  }
  if (uses.length > 1) {
    throw new ContinuationError(
      'not_singleton',
      `tool_use "${toolUseId}" shares its assistant message with ${uses.length - 1} other tool use(s): a suspending tool must be the only tool use of its response, or its siblings would be dropped or re-run on resume (run the siblings first, or disable parallel tool calls for suspending tools)`,
      { field: 'assistant.content' },
    );
  }
}

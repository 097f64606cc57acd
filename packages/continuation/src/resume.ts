import { type Message, type ToolResultBlock, ToolResultBlockSchema, userMessage } from '@x/wire';
import { ContinuationError } from './errors.js';
import { firstIssue } from './field-path.js';
import type { ContinuationStore } from './store.js';
import type { Suspension } from './suspension.js';

/**
 * Builds the messages to resume with, WITHOUT marking the continuation resolved:
 * with `messages` recorded, the full transcript plus one user message carrying `result`;
 * without, exactly `[assistant, user(result)]` (the caller still holds the prior turns).
 * The transcript is never duplicated. Pure: it reads nothing and writes nothing.
 *
 * Separate from {@link resolve} because callers differ on when it is safe to mark: an
 * interactive session can ask the person again, so it marks at once; an unattended
 * executive must keep the interaction retryable until the resumed run reaches a terminal
 * state, or a transient model error would strand the answer.
 *
 * @throws {ContinuationError} `mismatched_result` unless `result` is a `tool_result` for the
 *   suspended `tool_use_id` (a mismatched pairing answers the wrong question);
 *   `invalid` for a malformed result; `already_resolved` for a suspension marked resolved.
 * @example
 * const next = resumeMessages(suspension, toolResult(suspension.toolUseId, 'Yes, deploy'));
 * const reply = await model.create({ messages: next });
 * await store.markResolved(suspension.interactionId); // once the run is terminal
 */
export function resumeMessages(suspension: Suspension, result: ToolResultBlock): Message[] {
  const id = suspension.interactionId;
  if (suspension.resolved) {
    throw new ContinuationError(
      'already_resolved',
      `interaction "${id}" is already resolved: resuming it again would re-run its side effects`,
      { interactionId: id },
    );
  }
  const candidate: unknown = result;
  const type =
    typeof candidate === 'object' && candidate !== null && 'type' in candidate
      ? candidate.type
      : undefined;
  if (type !== 'tool_result') {
    throw new ContinuationError(
      'mismatched_result',
      `the answer to interaction "${id}" must be a tool_result block, got ${JSON.stringify(type ?? typeof candidate)}`,
      { interactionId: id },
    );
  }
  const parsed = ToolResultBlockSchema.safeParse(candidate);
  if (!parsed.success) {
    const [field, message] = firstIssue(parsed.error);
    throw new ContinuationError('invalid', `tool_result ${field}: ${message}`, {
      interactionId: id,
      field,
      cause: parsed.error,
    });
  }
  if (parsed.data.tool_use_id !== suspension.toolUseId) {
    throw new ContinuationError(
      'mismatched_result',
      `tool_result answers "${parsed.data.tool_use_id}" but interaction "${id}" waits on tool_use "${suspension.toolUseId}": pass the result for the suspended tool use`,
      { interactionId: id, field: 'tool_use_id' },
    );
  }
  const answer = userMessage(parsed.data);
  if (suspension.messages !== undefined && suspension.messages.length > 0) {
    return [...suspension.messages, answer];
  }
  return [suspension.assistant, answer];
}

/**
 * Builds the resume messages and marks the continuation resolved in one step, for a
 * caller that can afford to lose the retry (an interactive session: the person is there
 * to ask again). The result is checked before anything is marked.
 *
 * @throws {ContinuationError} as {@link resumeMessages}, then as the store's `markResolved`
 *   (`already_resolved` for the loser of a race, `not_found`).
 * @example
 * const suspension = await store.load(interactionId);
 * transcript.push(...(await resolve(store, suspension, toolResult(suspension.toolUseId, answer))));
 */
export async function resolve(
  store: ContinuationStore,
  suspension: Suspension,
  result: ToolResultBlock,
): Promise<Message[]> {
  const messages = resumeMessages(suspension, result);
  await store.markResolved(suspension.interactionId);
  return messages;
}

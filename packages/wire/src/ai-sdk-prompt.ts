import { toModelMessages } from './ai-sdk.js';
import type { AiSdkModelMessage } from './ai-sdk-types.js';
import type { Message } from './message.js';

/** A message {@link toModelPrompt} writes: any {@link AiSdkModelMessage} but a system one. */
export type AiSdkPromptMessage = Exclude<AiSdkModelMessage, { role: 'system' }>;

/**
 * The `system` and `messages` options of `generateText` / `streamText`, as
 * {@link toModelPrompt} writes them.
 */
export interface AiSdkPrompt {
  /** The system prompt, when one was given. */
  system?: string;
  messages: AiSdkPromptMessage[];
}

/** Options of {@link toModelPrompt}. */
export interface ToModelPromptOptions {
  /** The system prompt, returned as `system` (not as a message). Default: none. */
  system?: string;
}

/**
 * Writes a transcript as the prompt options of the Vercel AI SDK (ai@6), to spread into
 * `generateText` / `streamText`. The system prompt comes back as its own `system` option:
 * the AI SDK warns about system messages inside `messages` (a prompt-injection risk),
 * which `toModelMessages(transcript, { system })` writes. Messages are written exactly as
 * {@link toModelMessages} writes them.
 *
 * @throws {WireError} as {@link toModelMessages}.
 * @example
 * const result = await generateText({ model, tools, ...toModelPrompt(transcript, { system }) });
 */
export function toModelPrompt(
  messages: readonly Message[],
  options: ToModelPromptOptions = {},
): AiSdkPrompt {
  const written = toModelMessages(messages).filter(
    (message): message is AiSdkPromptMessage => message.role !== 'system',
  );
  return options.system === undefined
    ? { messages: written }
    : { system: options.system, messages: written };
}

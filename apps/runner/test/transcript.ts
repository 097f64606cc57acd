import { checkTranscript, type Message, parseMessages, toolResults, toolUses } from '@x/wire';
import { expect } from 'vitest';

/** Every tool_use is answered by exactly one tool_result, and the transcript is valid. */
export function expectPaired(raw: unknown): Message[] {
  const messages = parseMessages(raw);
  checkTranscript(messages);
  const uses = messages.flatMap((m) => toolUses(m).map((u) => u.id));
  const results = messages.flatMap((m) => toolResults(m).map((r) => r.tool_use_id));
  expect(results.sort()).toEqual(uses.sort());
  return messages;
}

import { randomBytes } from 'node:crypto';
import type { AssistantMessage, Message } from '@x/wire';
import { createSuspension, type Suspension, type SuspensionInit } from '../suspension.js';

/** A fresh id, safe as a file name: `prefix-<random hex>`. */
export function uniqueId(prefix = 'id'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** An assistant message whose only tool use is `ask_user` with id `toolUseId`. */
export function askingAssistant(
  toolUseId: string,
  question = 'Deploy to production?',
): AssistantMessage {
  return {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'I need approval first.', signature: 'sig==' },
      { type: 'text', text: 'Let me check with you.' },
      {
        type: 'tool_use',
        id: toolUseId,
        name: 'ask_user',
        input: { question, options: ['yes', 'no'] },
      },
    ],
  };
}

/** A transcript of `turns` earlier exchanges (answered tool calls included) ending with `assistant`. */
export function transcriptEndingWith(assistant: Message, turns = 2): Message[] {
  const messages: Message[] = [];
  for (let i = 0; i < turns; i++) {
    const id = `toolu_prior_${i}_${randomBytes(3).toString('hex')}`;
    messages.push({ role: 'user', content: [{ type: 'text', text: `request ${i}` }] });
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `/tmp/${i}` } }],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: `contents ${i}` }],
    });
  }
  messages.push(assistant);
  return messages;
}

/**
 * A valid, unresolved suspension with fresh ids; `overrides` are applied to the
 * {@link SuspensionInit} (pass `messages: true` for a transcript ending with the assistant).
 */
export function sampleSuspension(
  overrides: Partial<Omit<SuspensionInit, 'messages'>> & { messages?: Message[] | true } = {},
): Suspension {
  const toolUseId = overrides.toolUseId ?? uniqueId('toolu');
  const assistant = overrides.assistant ?? askingAssistant(toolUseId);
  const { messages, ...rest } = overrides;
  const init: SuspensionInit = {
    interactionId: uniqueId('ask'),
    toolUseId,
    assistant,
    createdAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
    ...rest,
  };
  if (messages === true) init.messages = transcriptEndingWith(assistant);
  else if (messages !== undefined) init.messages = messages;
  return createSuspension(init);
}

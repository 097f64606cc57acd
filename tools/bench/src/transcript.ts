import type { AssistantMessage, Message } from '@x/wire';

// ~200 bytes of JSON per message on average, as the issue asks.
const FILLER = 'The quick brown fox jumps over the lazy dog while the agent keeps notes. ';

function text(i: number, length: number): string {
  const base = `#${i} ${FILLER.repeat(3)}`;
  return base.slice(0, length);
}

/** The suspending assistant message: one `ask_user` call, nothing else (the singleton rule). */
export function askMessage(i: number): AssistantMessage {
  return {
    role: 'assistant',
    content: [
      { type: 'text', text: 'I need one thing from you before I go on.' },
      {
        type: 'tool_use',
        id: `toolu_ask_${i}`,
        name: 'ask_user',
        input: { question: 'Which city should the trip start from?' },
      },
    ],
  };
}

/**
 * A well-formed transcript of `n` messages (~200 bytes each) ending with the assistant
 * message that asks: user text, assistant text + tool call, user tool result, assistant
 * text, repeated; the message before the question is always a user message.
 */
export function transcript(n: number, seed = 0): Message[] {
  if (n < 2) throw new Error('a transcript needs at least 2 messages');
  const out: Message[] = [];
  for (let i = 0; i < n - 1; i++) {
    const id = `toolu_${seed}_${i - 1}`;
    const last = i === n - 2;
    switch (last ? 0 : i % 4) {
      case 0:
        out.push({ role: 'user', content: [{ type: 'text', text: text(i, 150) }] });
        break;
      case 1:
        out.push({
          role: 'assistant',
          content: [
            { type: 'text', text: text(i, 40) },
            { type: 'tool_use', id: `toolu_${seed}_${i}`, name: 'add', input: { numbers: [i, 2] } },
          ],
        });
        break;
      case 2:
        out.push({
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: id, content: `${i + 1}: ${text(i, 70)}` }],
        });
        break;
      default:
        out.push({ role: 'assistant', content: [{ type: 'text', text: text(i, 150) }] });
    }
  }
  out.push(askMessage(seed));
  return out;
}

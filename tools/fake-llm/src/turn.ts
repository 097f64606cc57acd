/** Which API a request came in on. */
export type Protocol = 'anthropic' | 'openai';

/** One tool call the conversation holds so far, with its result once there is one. */
export interface ToolCallSeen {
  id: string;
  name: string;
  input: unknown;
  /** The result's text; undefined while the call waits for its result. */
  result?: string;
}

/** What a script sees of one request: the conversation so far, read from either API. */
export interface Turn {
  protocol: Protocol;
  /** The names of the tools the request offers. */
  tools: string[];
  /** Every tool call of the conversation, in order. */
  calls: ToolCallSeen[];
  /** The text of the first user message. */
  userText: string;
  /** The request body as sent. */
  body: Record<string, unknown>;
}

/** What the scripted model answers: text, or one tool call. */
export type Action = { text: string } | { toolCall: { name: string; input: unknown } };

/** The scripted model: decides each answer from the conversation so far. */
export type Script = (turn: Turn) => Action;

type Json = Record<string, unknown>;

const asArray = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** Reads a request body of either API into a {@link Turn}. */
export function readTurn(protocol: Protocol, body: Json): Turn {
  const messages = asArray(body.messages);
  const calls: ToolCallSeen[] = [];
  const byId = new Map<string, ToolCallSeen>();
  const see = (call: ToolCallSeen) => {
    calls.push(call);
    byId.set(call.id, call);
  };
  for (const message of messages) {
    if (protocol === 'anthropic') {
      for (const block of asArray(message.content)) {
        if (block.type === 'tool_use') {
          see({ id: String(block.id), name: String(block.name), input: block.input });
        }
        if (block.type === 'tool_result') {
          const call = byId.get(String(block.tool_use_id));
          if (call) call.result = textOf(block.content);
        }
      }
    } else {
      for (const call of asArray(message.tool_calls)) {
        const fn = (call.function ?? {}) as Json;
        see({
          id: String(call.id),
          name: String(fn.name),
          input: JSON.parse(String(fn.arguments)),
        });
      }
      if (message.role === 'tool') {
        const call = byId.get(String(message.tool_call_id));
        if (call) call.result = textOf(message.content);
      }
    }
  }
  const tools = asArray(body.tools).map((tool) =>
    String(protocol === 'anthropic' ? tool.name : (tool.function as Json | undefined)?.name),
  );
  const firstUser = messages.find((m) => m.role === 'user');
  return { protocol, tools, calls, userText: textOf(firstUser?.content), body };
}

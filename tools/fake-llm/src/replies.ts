import type { Action } from './turn.js';

const usageAnthropic = { input_tokens: 10, output_tokens: 5 };

/** The Messages API's JSON response for one action. */
export function anthropicMessage(action: Action, id: string, model: string): object {
  const content =
    'text' in action
      ? [{ type: 'text', text: action.text }]
      : [{ type: 'tool_use', id, name: action.toolCall.name, input: action.toolCall.input }];
  return {
    id: `msg_${id}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: 'text' in action ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: usageAnthropic,
  };
}

function openaiToolCall(action: Action, id: string) {
  if ('text' in action) return undefined;
  return {
    id,
    type: 'function',
    function: { name: action.toolCall.name, arguments: JSON.stringify(action.toolCall.input) },
  };
}

/** The Chat Completions JSON response for one action. */
export function openaiCompletion(action: Action, id: string, model: string): object {
  const call = openaiToolCall(action, id);
  return {
    id: `chatcmpl-${id}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'text' in action ? action.text : null,
          refusal: null,
          ...(call ? { tool_calls: [call] } : {}),
        },
        logprobs: null,
        finish_reason: call ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** Cuts `text` into the pieces a stream delivers: words with their trailing spaces. */
function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** One Server-Sent Event as the Messages API writes it: its type named twice. */
function anthropicEvent(data: { type: string; [field: string]: unknown }): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The Messages API's streamed events for one action (`stream: true`), in the order the
 * official SDK reads them: the message, one content block in deltas, the stop reason.
 */
export function anthropicStream(action: Action, id: string, model: string): string[] {
  const message = anthropicMessage(action, id, model) as { stop_reason: string };
  const start =
    'text' in action
      ? { type: 'text', text: '' }
      : { type: 'tool_use', id, name: action.toolCall.name, input: {} };
  const deltas =
    'text' in action
      ? pieces(action.text).map((text) => ({ type: 'text_delta', text }))
      : pieces(JSON.stringify(action.toolCall.input)).map((partial_json) => ({
          type: 'input_json_delta',
          partial_json,
        }));
  return [
    anthropicEvent({
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...usageAnthropic, output_tokens: 1 },
      },
    }),
    anthropicEvent({ type: 'content_block_start', index: 0, content_block: start }),
    ...deltas.map((delta) => anthropicEvent({ type: 'content_block_delta', index: 0, delta })),
    anthropicEvent({ type: 'content_block_stop', index: 0 }),
    anthropicEvent({
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: usageAnthropic.output_tokens },
    }),
    anthropicEvent({ type: 'message_stop' }),
  ];
}

/**
 * The Chat Completions streamed chunks for one action (`stream: true`), each a `data:` event,
 * ending with `data: [DONE]`; with `include_usage`, a last chunk carries the token counts.
 */
export function openaiStream(
  action: Action,
  id: string,
  model: string,
  includeUsage: boolean,
): string[] {
  const chunk = (choices: object[], extra: object = {}) =>
    `data: ${JSON.stringify({
      id: `chatcmpl-${id}`,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model,
      choices,
      ...extra,
    })}\n\n`;
  const delta = (d: object, finish: string | null = null) =>
    chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  const body =
    'text' in action
      ? pieces(action.text).map((content) => delta({ content }))
      : [
          delta({
            tool_calls: [
              {
                index: 0,
                id,
                type: 'function',
                function: { name: action.toolCall.name, arguments: '' },
              },
            ],
          }),
          ...pieces(JSON.stringify(action.toolCall.input)).map((args) =>
            delta({ tool_calls: [{ index: 0, function: { arguments: args } }] }),
          ),
        ];
  return [
    delta({ role: 'assistant', content: 'text' in action ? '' : null }),
    ...body,
    delta({}, 'text' in action ? 'stop' : 'tool_calls'),
    ...(includeUsage
      ? [chunk([], { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })]
      : []),
    'data: [DONE]\n\n',
  ];
}

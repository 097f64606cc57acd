import type { Action } from './turn.js';

const usageAnthropic = { input_tokens: 10, output_tokens: 5 };

/** The Messages API's JSON response for one action. */
export function anthropicMessage(action: Action, id: string, model: string): object {
  const content =
    'text' in action
      ? [{ type: 'text', text: action.text, citations: null }]
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

/** The same message as Messages API server-sent events. */
export function anthropicEvents(action: Action, id: string, model: string): string[] {
  const message = anthropicMessage(action, id, model) as { stop_reason: string };
  const start =
    'text' in action
      ? { type: 'text', text: '' }
      : { type: 'tool_use', id, name: action.toolCall.name, input: {} };
  const delta =
    'text' in action
      ? { type: 'text_delta', text: action.text }
      : { type: 'input_json_delta', partial_json: JSON.stringify(action.toolCall.input) };
  const events: Array<[string, object]> = [
    ['message_start', { type: 'message_start', message: { ...message, content: [] } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: start }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: message.stop_reason, stop_sequence: null },
        usage: { output_tokens: 5 },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  ];
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
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

/** The same completion as Chat Completions server-sent events. */
export function openaiEvents(action: Action, id: string, model: string): string[] {
  const call = openaiToolCall(action, id);
  const chunk = (delta: object, finish: string | null) => ({
    id: `chatcmpl-${id}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunks = [
    chunk({ role: 'assistant', content: call ? null : '' }, null),
    call
      ? chunk({ tool_calls: [{ index: 0, ...call }] }, null)
      : chunk({ content: (action as { text: string }).text }, null),
    chunk({}, call ? 'tool_calls' : 'stop'),
  ];
  return [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'];
}

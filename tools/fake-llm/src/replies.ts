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

import { randomUUID } from 'node:crypto';
import type { Model, ModelRequest, ToolSpec } from '@x/executive';
import type { AssistantMessage, OpenAIChatToolCall } from '@x/wire';
import { fromOpenAIChat, toOpenAIChat, WireError } from '@x/wire';
import type OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
} from 'openai/resources/chat/completions';
import { ModelError } from '../errors.js';
import {
  type AttemptFailure,
  connectionLost,
  type RetryPolicy,
  StreamCutError,
  statusFailure,
  transportFailure,
  withRetry,
} from './call-retry.js';

/** Settings of {@link OpenAIModel}. */
interface OpenAISettings {
  /** Local servers need none; the SDK then sends a placeholder. */
  apiKey?: string | undefined;
  /** Default `https://api.openai.com/v1`; a local server's is e.g. `http://localhost:11434/v1`. */
  baseURL?: string | undefined;
  retry: RetryPolicy;
}

/** Tool specs as Chat Completions takes them. `$schema` is a meta key, not part of the input. */
function openAITools(tools: readonly ToolSpec[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => {
    const { $schema: _, ...parameters } = tool.inputSchema;
    return {
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters },
    };
  });
}

function classify(error: unknown, sdk: typeof OpenAI, url: string): AttemptFailure {
  const transport = transportFailure(error, sdk.APIConnectionError, url);
  if (transport) return transport;
  if (error instanceof sdk.APIError) {
    const body = error.error as { message?: string; type?: string; code?: string } | undefined;
    const what =
      [error.status, body?.code ?? body?.type, body?.message].filter(Boolean).join(' ') ||
      error.message;
    if (error.status === undefined) {
      // An error object in the middle of the stream: usually an overloaded backend.
      return { code: 'unavailable', retryable: true, message: `stream error: ${what}` };
    }
    return statusFailure(error.status, error.headers, what);
  }
  const lost = connectionLost(error, url);
  if (lost) return lost;
  return {
    code: 'unexpected',
    retryable: false,
    message: error instanceof Error ? error.message : String(error),
  };
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/** Assembles text and tool calls from the chunks of one streamed completion. */
async function collect(
  stream: AsyncIterable<ChatCompletionChunk>,
  { onText, onUsage }: Pick<ModelRequest, 'onText' | 'onUsage'>,
): Promise<{ text: string; calls: PartialCall[]; finish: string }> {
  let text = '';
  let finish: string | undefined;
  // Keyed by the delta's index: a call's id and name come once, its arguments in pieces.
  const calls = new Map<number, PartialCall>();
  for await (const chunk of stream) {
    // Asked for by `stream_options.include_usage`: a last chunk, usually without choices.
    if (chunk.usage) {
      onUsage?.({
        inputTokens: chunk.usage.prompt_tokens,
        outputTokens: chunk.usage.completion_tokens,
      });
    }
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      text += delta.content;
      onText?.(delta.content);
    }
    for (const [position, part] of (delta.tool_calls ?? []).entries()) {
      // Some compatible servers leave out `index`; they send each call whole, in order.
      const index = part.index ?? calls.size + position;
      const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      calls.set(index, call);
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  if (finish === undefined) throw new StreamCutError('a finish_reason');
  const ordered = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  return { text, calls: ordered, finish };
}

/**
 * A model behind the OpenAI Chat Completions API (OpenAI itself, or a compatible server
 * such as Ollama, vLLM or llama.cpp) through the official `openai` SDK, streaming. The
 * transcript stays in @x/wire format: `toOpenAIChat` on the way out, `fromOpenAIChat` on
 * the way back, nothing else.
 *
 * @example
 * const model = modelFromId('openai:gpt-5'); // settings from the environment
 */
export class OpenAIModel implements Model {
  readonly id: string;
  readonly #model: string;
  readonly #settings: OpenAISettings;
  #client: Promise<{ sdk: typeof OpenAI; client: OpenAI }> | undefined;

  constructor(model: string, settings: OpenAISettings) {
    this.id = `openai:${model}`;
    this.#model = model;
    this.#settings = settings;
  }

  /** The SDK loads on the first call, so commands that never call a model start fast. */
  #connect(): Promise<{ sdk: typeof OpenAI; client: OpenAI }> {
    this.#client ??= import('openai').then(({ default: sdk }) => ({
      sdk,
      client: new sdk({
        apiKey: this.#settings.apiKey || 'none',
        baseURL: this.#settings.baseURL ?? null,
        // Ours are the only retries (retry.ts): bounded, honouring retry-after.
        maxRetries: 0,
      }),
    }));
    return this.#client;
  }

  async generate(request: ModelRequest): Promise<AssistantMessage> {
    const params: ChatCompletionCreateParamsStreaming = {
      model: this.#model,
      messages: toOpenAIChat(request.messages, { system: request.system }),
      tools: openAITools(request.tools),
      stream: true,
      // The call's token counts come in a last chunk, for the `chat` span's usage attributes.
      stream_options: { include_usage: true },
    };
    const { sdk, client } = await this.#connect();
    const { text, calls, finish } = await withRetry(
      'openai',
      async () => {
        const stream = await client.chat.completions.create(params, {
          signal: request.signal ?? null,
        });
        return collect(stream, request);
      },
      (error) => classify(error, sdk, client.baseURL),
      this.#settings.retry,
      {
        signal: request.signal,
        onRetry: (failure, attempt, waitMs) =>
          request.onRetry?.({ attempt: attempt + 1, reason: failure.message, waitMs }),
      },
    );
    const toolCalls: OpenAIChatToolCall[] = calls.map((call) => ({
      // A compatible server may send no id; the transcript needs one to pair the result.
      id: call.id || `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
      type: 'function',
      // No arguments at all means no input.
      function: {
        name: call.name,
        arguments: call.arguments.trim() === '' ? '{}' : call.arguments,
      },
    }));
    try {
      const { messages } = fromOpenAIChat([
        {
          role: 'assistant',
          content: text === '' ? null : text,
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        },
      ]);
      return messages[0] as AssistantMessage;
    } catch (cause) {
      const hint = finish === 'length' ? ' (the response hit its length limit)' : '';
      const what = WireError.is(cause)
        ? cause.message.replace(/^\[@x\/wire\] /, '')
        : String(cause);
      throw new ModelError(
        'bad_response',
        `[openai] the model's response cannot be used${hint}: ${what}`,
        { retryable: false, cause },
      );
    }
  }
}

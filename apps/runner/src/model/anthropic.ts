import type Anthropic from '@anthropic-ai/sdk';
import type {
  MessageCreateParamsStreaming,
  RawMessageStreamEvent,
  ThinkingConfigParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import type { Model, ModelRequest, ToolSpec } from '@x/executive';
import type { AssistantBlock, AssistantMessage, JsonValue } from '@x/wire';
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

/** Settings of {@link AnthropicModel}; `fromEnv` fills them from the environment. */
interface AnthropicSettings {
  apiKey: string;
  /** Default `https://api.anthropic.com` (the SDK adds `/v1/messages`). */
  baseURL?: string | undefined;
  maxTokens: number;
  /** Extended thinking: a token budget, `adaptive`, or none. */
  thinking?: ThinkingConfigParam | undefined;
  retry: RetryPolicy;
}

/** A block being assembled from the stream. */
type Partial =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; json: string; input: unknown }
  | { type: 'skip' };

/** Tool specs as the Messages API takes them. `$schema` is a meta key, not part of the input. */
function anthropicTools(tools: readonly ToolSpec[]): Tool[] {
  return tools.map((tool) => {
    const { $schema: _, ...schema } = tool.inputSchema;
    return {
      name: tool.name,
      description: tool.description,
      input_schema: { ...schema, type: 'object' } as Tool.InputSchema,
    };
  });
}

function classify(error: unknown, sdk: typeof Anthropic, url: string): AttemptFailure {
  const transport = transportFailure(error, sdk.APIConnectionError, url);
  if (transport) return transport;
  if (error instanceof sdk.APIError) {
    const type =
      (error.error as { error?: { type?: string } } | undefined)?.error?.type ?? error.type;
    const detail = (error.error as { error?: { message?: string } } | undefined)?.error?.message;
    const what = [error.status, type, detail].filter(Boolean).join(' ') || error.message;
    if (error.status === undefined) {
      // An `error` event in the middle of the stream (e.g. overloaded_error): transient
      // unless the server says the request itself is bad.
      const bad =
        type === 'invalid_request_error' ||
        type === 'authentication_error' ||
        type === 'permission_error';
      return {
        code: bad ? 'refused' : 'unavailable',
        retryable: !bad,
        message: `stream error: ${what}`,
      };
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

/** Assembles one assistant message from the raw stream events. */
async function collect(
  stream: AsyncIterable<RawMessageStreamEvent>,
  { onText, onUsage }: Pick<ModelRequest, 'onText' | 'onUsage'>,
): Promise<{ content: AssistantBlock[]; stopReason: string | null }> {
  const blocks: Partial[] = [];
  let stopReason: string | null = null;
  let stopped = false;
  for await (const event of stream) {
    switch (event.type) {
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text') blocks[event.index] = { type: 'text', text: block.text };
        else if (block.type === 'thinking')
          blocks[event.index] = {
            type: 'thinking',
            thinking: block.thinking,
            signature: block.signature,
          };
        else if (block.type === 'redacted_thinking')
          blocks[event.index] = { type: 'redacted_thinking', data: block.data };
        else if (block.type === 'tool_use')
          blocks[event.index] = {
            type: 'tool_use',
            id: block.id,
            name: block.name,
            json: '',
            input: block.input,
          };
        // Server tools are never offered, so nothing else should come; kept out if it does.
        else blocks[event.index] = { type: 'skip' };
        if (block.type === 'text' && block.text) onText?.(block.text);
        break;
      }
      case 'content_block_delta': {
        const block = blocks[event.index];
        const delta = event.delta;
        if (delta.type === 'text_delta' && block?.type === 'text') {
          block.text += delta.text;
          onText?.(delta.text);
        } else if (delta.type === 'thinking_delta' && block?.type === 'thinking') {
          block.thinking += delta.thinking;
        } else if (delta.type === 'signature_delta' && block?.type === 'thinking') {
          // Kept as sent, byte for byte: the API checks it when the turn comes back.
          block.signature += delta.signature;
        } else if (delta.type === 'input_json_delta' && block?.type === 'tool_use') {
          block.json += delta.partial_json;
        }
        break;
      }
      case 'message_start': {
        const { input_tokens, output_tokens } = event.message.usage;
        onUsage?.({ inputTokens: input_tokens, outputTokens: output_tokens });
        break;
      }
      case 'message_delta': {
        stopReason = event.delta.stop_reason ?? stopReason;
        // Its output count is the message's so far; an input count, when sent, is the final one.
        const { input_tokens, output_tokens } = event.usage;
        onUsage?.({
          ...(typeof input_tokens === 'number' ? { inputTokens: input_tokens } : {}),
          outputTokens: output_tokens,
        });
        break;
      }
      case 'message_stop':
        stopped = true;
        break;
      default:
        break;
    }
  }
  // A body that ends before message_stop broke off: the network, worth another try.
  if (!stopped) throw new StreamCutError('message_stop');
  const content: AssistantBlock[] = [];
  for (const block of blocks) {
    if (!block || block.type === 'skip') continue;
    if (block.type !== 'tool_use') {
      content.push(block);
      continue;
    }
    let input: JsonValue;
    try {
      // The input arrives as pieces of JSON; it is whole only at the end of the block.
      input = (
        block.json.trim() === '' ? (block.input ?? {}) : JSON.parse(block.json)
      ) as JsonValue;
    } catch (cause) {
      throw new ModelError(
        'bad_response',
        `[anthropic] the model's call to ${block.name} has incomplete JSON input${stopReason === 'max_tokens' ? ' (it hit max_tokens: raise RUNNER_MAX_TOKENS)' : ''}`,
        { retryable: false, cause },
      );
    }
    content.push({ type: 'tool_use', id: block.id, name: block.name, input });
  }
  return { content, stopReason };
}

/**
 * A Claude model through the official `@anthropic-ai/sdk`, streaming. Our transcript is
 * already the Messages API shape, so it is sent as it is: thinking and redacted-thinking
 * blocks go back byte for byte, signature included.
 *
 * @example
 * const model = modelFromId('anthropic:claude-sonnet-4-5'); // settings from the environment
 */
export class AnthropicModel implements Model {
  readonly id: string;
  readonly #model: string;
  readonly #settings: AnthropicSettings;
  #client: Promise<{ sdk: typeof Anthropic; client: Anthropic }> | undefined;

  constructor(model: string, settings: AnthropicSettings) {
    this.id = `anthropic:${model}`;
    this.#model = model;
    this.#settings = settings;
  }

  /** The SDK loads on the first call, so commands that never call a model start fast. */
  #connect(): Promise<{ sdk: typeof Anthropic; client: Anthropic }> {
    this.#client ??= import('@anthropic-ai/sdk').then(({ default: sdk }) => ({
      sdk,
      client: new sdk({
        apiKey: this.#settings.apiKey,
        baseURL: this.#settings.baseURL ?? null,
        // Ours are the only retries (retry.ts): bounded, honouring retry-after.
        maxRetries: 0,
      }),
    }));
    return this.#client;
  }

  async generate(request: ModelRequest): Promise<AssistantMessage> {
    const { maxTokens, thinking } = this.#settings;
    const params: MessageCreateParamsStreaming = {
      model: this.#model,
      max_tokens: maxTokens,
      system: request.system,
      // The @x/wire transcript is the Messages API shape already: no conversion.
      messages: request.messages,
      tools: anthropicTools(request.tools),
      stream: true,
      ...(thinking ? { thinking } : {}),
    };
    const { sdk, client } = await this.#connect();
    const { content } = await withRetry(
      'anthropic',
      async () => {
        const stream = await client.messages.create(params, {
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
    return { role: 'assistant', content };
  }
}

import type { AssistantMessage, Message } from '@x/wire';

/** A tool as the model sees it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input. */
  inputSchema: Record<string, unknown>;
}

/** One call to a model. */
export interface ModelRequest {
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  /** Called with each piece of text as it arrives. */
  onText?: (delta: string) => void;
  signal?: AbortSignal;
}

/** Something that answers a transcript with the next assistant message. */
export interface Model {
  /** E.g. `scripted:trip`. */
  readonly id: string;
  generate(request: ModelRequest): Promise<AssistantMessage>;
}

/** A model failed; `retryable` says whether trying again later may succeed. */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  readonly retryable: boolean;
  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.retryable = options.retryable;
  }
}

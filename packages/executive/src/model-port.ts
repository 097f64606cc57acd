import type { AssistantMessage, Message } from '@x/wire';

/** A tool as the model sees it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input. */
  inputSchema: Record<string, unknown>;
}

/** A failed attempt of a model call that is about to be tried again. */
export interface ModelRetry {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** What went wrong, in one line. */
  reason: string;
  /** The wait before the next attempt. */
  waitMs: number;
}

/** The tokens one model call used, as its provider reports them. */
export interface ModelUsage {
  inputTokens?: number;
  outputTokens?: number;
}

/** One call to a model. */
export interface ModelRequest {
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  /** Called with each piece of text as it arrives. */
  onText?: (delta: string) => void;
  /**
   * Called before a failed attempt is retried: text streamed by `onText` since the call (or
   * the previous retry) began belongs to the failed attempt and is void.
   */
  onRetry?: (retry: ModelRetry) => void;
  /**
   * Called with the tokens used, as the provider reports them (in parts as the stream goes:
   * a later count of the same kind replaces an earlier one).
   */
  onUsage?: (usage: ModelUsage) => void;
  signal?: AbortSignal;
}

/** Something that answers a transcript with the next assistant message. */
export interface Model {
  /** E.g. `scripted:trip`. */
  readonly id: string;
  generate(request: ModelRequest): Promise<AssistantMessage>;
}

import type { AnsweredPause } from '@x/askuser';

const marker = Symbol.for('@x/executive.ExecutiveError');

/** What went wrong, as a stable string to branch on. */
export type ExecutiveErrorCode =
  /** A call's arguments are malformed (an empty run id, an unknown run kind, a bad option). */
  | 'usage'
  /** No run or question has that id or token; `tokens` lists the questions. */
  | 'not_found'
  /**
   * The answering identity may not answer: it is outside the question's audience, or it is the
   * requester of a question its requester may not answer.
   */
  | 'forbidden'
  /** The answer came at or after the question's deadline: its default is applied instead. */
  | 'expired'
  /** The question was answered already (by someone else, or by its deadline's default). */
  | 'already_answered'
  /** The run is not in a state that allows the call (e.g. retrying a run that has not failed). */
  | 'conflict'
  /**
   * The worker's lease on the run was taken over by another worker (it expired): the worker
   * that lost it committed nothing, and must drop its result.
   */
  | 'lease_lost'
  /** The database failed or could not be reached (a migration it refused, an outage). */
  | 'unavailable'
  /** A run reached a limit its policy sets (the questions one run may ask): it fails, not retried. */
  | 'limit_reached';

/** Options of {@link ExecutiveError}. */
export interface ExecutiveErrorOptions {
  /** The run the error is about, when known. */
  runId?: string;
  /** The questions (their tokens) the error is about. */
  tokens?: readonly string[];
  /** For `already_answered`: the questions answered already, each with how, by whom and when. */
  answered?: readonly AnsweredPause[];
  /** The original failure. */
  cause?: unknown;
}

/**
 * The one error `@x/executive` throws. Branch on `code` (or {@link ExecutiveError.hasCode}),
 * never on the message text. Nothing is changed when a call fails with it.
 *
 * @example
 * try {
 *   await answer();
 * } catch (err) {
 *   if (ExecutiveError.hasCode(err, 'already_answered')) console.log('someone was quicker');
 *   else throw err;
 * }
 */
export class ExecutiveError extends Error {
  readonly [marker] = true;
  override readonly name = 'ExecutiveError';
  readonly code: ExecutiveErrorCode;
  /** The run the error is about; undefined when it is about none in particular. */
  readonly runId: string | undefined;
  /** The questions the error is about; empty when it is about none in particular. */
  readonly tokens: readonly string[];
  /** For `already_answered`: how each question was answered; else empty. */
  readonly answered: readonly AnsweredPause[];

  constructor(code: ExecutiveErrorCode, message: string, options: ExecutiveErrorOptions = {}) {
    super(`[@x/executive] ${message}`, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.runId = options.runId;
    this.tokens = options.tokens ?? [];
    this.answered = options.answered ?? [];
  }

  /** True for an `ExecutiveError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is ExecutiveError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True when `error` is an `ExecutiveError` with that `code`. */
  static hasCode(error: unknown, code: ExecutiveErrorCode): error is ExecutiveError {
    return ExecutiveError.is(error) && error.code === code;
  }
}

/**
 * A message without a package's `[@x/...]` origin: it helps a library's caller, but in a
 * run's recorded reason, at a command line or in an API's answer it is noise.
 */
export function withoutOrigin(message: string): string {
  return message.replace(/^\[@x\/[\w-]+\] /, '');
}

import { AskUserError } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import { SessionError } from '@x/session';

/** What kind of failure an error is: the one thing exit codes and HTTP statuses follow. */
export type Failure = 'usage' | 'not_found' | 'conflict' | 'unavailable' | 'failed';

const marker = Symbol.for('runner.RunnerError');

/** The runner's own errors: bad usage, something named that does not exist, a busy resource. */
export class RunnerError extends Error {
  readonly [marker] = true;
  override readonly name = 'RunnerError';

  constructor(
    readonly code: Exclude<Failure, 'failed'>,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }

  /** True for a `RunnerError`, also one from another copy of this module. */
  static is(error: unknown): error is RunnerError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}

/** A bad command line, option value or setting (exit 2). */
export function usageError(message: string): RunnerError {
  return new RunnerError('usage', message);
}

/** A named conversation, run, session or question that does not exist (exit 3). */
export function notFoundError(message: string): RunnerError {
  return new RunnerError('not_found', message);
}

/**
 * A message without a package's `[@x/...]` origin: it helps a library's caller, but at the
 * command line and in the approval center's API it is noise.
 */
export function withoutOrigin(message: string): string {
  return message.replace(/^\[@x\/[\w-]+\] /, '');
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'CONNECT_TIMEOUT', 'ECONNRESET']);

/** Classifies any error the runner meets, by the packages' error codes. */
export function failureOf(error: unknown): Failure {
  if (RunnerError.is(error)) return error.code;
  if ((error as { code?: unknown })?.code?.toString().startsWith('ERR_PARSE_ARGS')) return 'usage';
  if (AskUserError.is(error)) {
    switch (error.code) {
      case 'invalid_answer':
      case 'invalid_pause':
      case 'invalid_argument':
        return 'usage';
      case 'not_found':
        return 'not_found';
      case 'duplicate':
        return 'conflict';
      case 'unavailable':
        return 'unavailable';
      default:
        return 'failed';
    }
  }
  if (ContinuationError.is(error)) {
    switch (error.code) {
      case 'not_found':
      case 'already_resolved':
        return 'not_found';
      case 'unsafe_id':
        return 'usage';
      case 'unavailable':
        return 'unavailable';
      case 'lease_lost':
        return 'conflict';
      default:
        return 'failed';
    }
  }
  if (SessionError.is(error)) {
    switch (error.code) {
      case 'conflict':
        return 'conflict';
      case 'unavailable':
        return 'unavailable';
      case 'unsafe_id':
        return 'usage';
      case 'not_found':
        return 'not_found';
      default:
        return 'failed';
    }
  }
  const code =
    (error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
  return code !== undefined && CONNECTION_CODES.has(code) ? 'unavailable' : 'failed';
}

/** Exit codes, as `runner --help` documents them. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  not_found: 3,
  unavailable: 4,
  conflict: 5,
} as const;

/** HTTP statuses of the approval center, by failure. */
export const HTTP_STATUS: Record<Failure, number> = {
  usage: 400,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
  failed: 500,
};

const marker = Symbol.for('@x/policy.PolicyError');

/** What went wrong, as a stable string to branch on. */
export type PolicyErrorCode =
  /** An option or argument is out of range or malformed (nothing was loaded). */
  | 'invalid_argument'
  /** A tool's JSON schema uses what a Cedar type cannot say (the tool, the path). */
  | 'unsupported_schema'
  /** A policy file does not parse, or does not validate against the tools' schema. */
  | 'invalid_policy'
  /** A rule's annotation is unknown, malformed or out of range (a deadline of `-5m`, a quorum of 0). */
  | 'invalid_annotation';

/** Where in a policy file a problem is, 1-based. */
export interface PolicySourceLocation {
  /** The file's name as given to {@link loadPolicySet} (a path, or `short-form`). */
  file: string;
  line: number;
  column: number;
}

/** Options of {@link PolicyError}. */
export interface PolicyErrorOptions {
  /** Where the problem is, when it is in a policy file. */
  location?: PolicySourceLocation;
  /** The original failure. */
  cause?: unknown;
}

/**
 * The one error `@x/policy` throws, always while loading: deciding never throws. Branch on
 * `code` (or `PolicyError.hasCode(err, ...)`), never on the message text.
 *
 * @example
 * try {
 *   policies = loadPolicySet({ tools, sources: await readPolicySources(['policies']) });
 * } catch (err) {
 *   if (PolicyError.hasCode(err, 'invalid_policy')) console.error(err.message); // file:line: Cedar's message
 *   throw err;
 * }
 */
export class PolicyError extends Error {
  readonly [marker] = true;
  override readonly name = 'PolicyError';
  readonly code: PolicyErrorCode;
  /** The message without its `[@x/policy]` origin. */
  readonly reason: string;
  readonly location: PolicySourceLocation | undefined;

  constructor(code: PolicyErrorCode, reason: string, options: PolicyErrorOptions = {}) {
    super(`[@x/policy] ${reason}`, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.reason = reason;
    this.location = options.location;
  }

  /** True for a `PolicyError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is PolicyError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True when `error` is a `PolicyError` with that `code`. */
  static hasCode(error: unknown, code: PolicyErrorCode): error is PolicyError {
    return PolicyError.is(error) && error.code === code;
  }
}

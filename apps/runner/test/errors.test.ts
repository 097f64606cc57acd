import { AskUserError } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import { ExecutiveError } from '@x/executive';
import { SessionError } from '@x/session';
import { describe, expect, it } from 'vitest';
import { ModelError, notFoundError, RunnerError, usageError } from '../src/errors.js';
import { classifyFailure } from '../src/failure.js';
import { statusFailure, withRetry } from '../src/model/call-retry.js';

// The one classifier: each error the runner meets gets one kind, and the kind one exit code
// (as `runner help exit-codes` documents them) and one HTTP status of the approval center.

/** A driver error as drizzle wraps it: the SQLSTATE or Node code on the cause. */
function driverError(code: string, message = 'driver says no'): Error {
  return new Error('Failed query: select 1', {
    cause: Object.assign(new Error(message), { code }),
  });
}

const ROWS = [
  {
    failure: 'failed',
    exitCode: 1,
    httpStatus: 500,
    httpCode: 'internal',
    errors: [
      new Error('boom'),
      new ContinuationError('not_singleton', 'two tool uses'),
      new SessionError('invalid', 'bad state'),
      new AskUserError('corrupt', 'bad row'),
      // A model's failure is the run's, even when the provider refused the connection.
      new ModelError('unavailable', '[openai] cannot reach http://127.0.0.1:9/v1', {
        retryable: true,
        cause: driverError('ECONNREFUSED'),
      }),
      new ModelError('refused', '[anthropic] 401 authentication_error', { retryable: false }),
    ],
  },
  {
    failure: 'usage',
    exitCode: 2,
    httpStatus: 400,
    httpCode: 'invalid_request',
    errors: [
      usageError('--limit must be a whole number'),
      Object.assign(new TypeError("Unknown option '--nope'"), {
        code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION',
      }),
      new AskUserError('invalid_answer', 'action must be accept, decline or cancel'),
      new AskUserError('invalid_pause', 'empty token'),
      new AskUserError('invalid_argument', 'bad cutoff'),
      new ContinuationError('unsafe_id', 'interaction id "../x" is not a safe file name'),
      new SessionError('unsafe_id', 'session id "../x" is not a safe file name'),
      new ExecutiveError('usage', 'an unknown run kind'),
    ],
  },
  {
    failure: 'not_found',
    exitCode: 3,
    httpStatus: 404,
    httpCode: 'not_found',
    errors: [
      notFoundError('no conversation c1'),
      new AskUserError('not_found', 'no pending pause for token "t"'),
      new ContinuationError('not_found', 'no continuation i1'),
      new ContinuationError('already_resolved', 'i1 was resolved'),
      new SessionError('not_found', 'no session s1'),
      new ExecutiveError('not_found', 'no run r1'),
    ],
  },
  {
    failure: 'unavailable',
    exitCode: 4,
    httpStatus: 503,
    httpCode: 'unavailable',
    errors: [
      new RunnerError('unavailable', 'the data folder is in use'),
      new AskUserError('unavailable', 'listing failed: SQLSTATE 57P01'),
      new ContinuationError('unavailable', 'saving failed'),
      new SessionError('unavailable', 'reading failed'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      driverError('CONNECT_TIMEOUT'),
      driverError('28P01', 'password authentication failed'),
      // Anyone's error whose cause is a store's `unavailable`.
      new Error('cannot list', { cause: new ContinuationError('unavailable', 'listing failed') }),
    ],
  },
  {
    failure: 'conflict',
    exitCode: 5,
    httpStatus: 409,
    httpCode: 'conflict',
    errors: [
      new RunnerError('conflict', 'run r1 is not failed'),
      new AskUserError('duplicate', 'a pause with token "t" already exists'),
      new ContinuationError('lease_lost', 'the lease on r1 was taken over'),
      new SessionError('conflict', 'changed by another writer'),
      new ExecutiveError('already_answered', 'question t was already answered'),
      new ExecutiveError('conflict', 'run r1 is not failed'),
      new ExecutiveError('lease_lost', 'the lease on r1 was taken over'),
    ],
  },
  {
    failure: 'forbidden',
    exitCode: 6,
    httpStatus: 403,
    httpCode: 'forbidden',
    errors: [
      new RunnerError('forbidden', 'vic is a viewer'),
      new AskUserError('forbidden', 'cy may not answer question "t"'),
      new ExecutiveError('forbidden', 'cy may not answer question "t"'),
    ],
  },
  {
    failure: 'expired',
    exitCode: 7,
    httpStatus: 410,
    httpCode: 'expired',
    errors: [
      new AskUserError('expired', 'the question "t" reached its deadline'),
      new ContinuationError('expired', 'interaction "i1" reached its deadline before this answer'),
      new ExecutiveError('expired', 'the question "t" reached its deadline'),
    ],
  },
] as const;

describe('classifyFailure', () => {
  for (const { errors, ...row } of ROWS) {
    it(`answers ${row.failure} with exit ${row.exitCode} and HTTP ${row.httpStatus}`, () => {
      for (const error of errors) {
        const classified = classifyFailure(error);
        expect({ ...classified, error: error.message }).toMatchObject({
          ...row,
          error: error.message,
        });
        expect(classified.message).toBe(error.message.replace(/^\[@x\/[\w-]+\] /, ''));
      }
    });
  }

  it("gives the caller's failures their own words and hides the operator's behind the log", () => {
    const usage = classifyFailure(new AskUserError('invalid_answer', 'content must be a string'));
    expect(usage).toMatchObject({
      message: 'content must be a string',
      httpMessage: 'content must be a string',
      internal: false,
    });
    const down = classifyFailure(driverError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'));
    expect(down).toMatchObject({
      message: 'Failed query: select 1',
      httpMessage: 'the database is unavailable; try again shortly',
      internal: true,
    });
    expect(classifyFailure(new Error('secret path /srv/x')).httpMessage).toBe(
      'internal error; the server log has the details',
    );
    expect(classifyFailure('a string thrown').message).toBe('a string thrown');
  });

  it("a value the database refused (SQLSTATE class 22) is the caller's input (exit 2, 400), never unavailable, in every package", () => {
    const refused = (code: string) =>
      Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code });
    // A driver's own error names the reason only, never its query and parameters.
    const raw = classifyFailure(
      new Error('Failed query: select $1 params: a\u0000b', { cause: refused('22021') }),
    );
    expect(raw).toMatchObject({
      failure: 'usage',
      exitCode: 2,
      httpStatus: 400,
      httpCode: 'invalid_request',
      internal: false,
      message:
        'the database refused a value it was given (SQLSTATE 22021: invalid byte sequence for encoding "UTF8": 0x00)',
    });
    const wrapped = new AskUserError('invalid_answer', 'markResumed refused: ...', {
      sqlState: '22021',
      cause: refused('22021'),
    });
    expect(classifyFailure(wrapped).failure).toBe('usage');
    for (const error of [
      new ContinuationError('invalid', 'save refused', { sqlState: '22P05' }),
      new SessionError('invalid', 'put refused'),
    ]) {
      expect(classifyFailure(error).failure).not.toBe('unavailable');
    }
  });
});

describe('ModelError', () => {
  it('carries a code and is recognised by its marker, also from another copy of the module', () => {
    const error = new ModelError('rate_limited', '[openai] 429 rate_limit_exceeded', {
      retryable: true,
    });
    expect(error).toMatchObject({ name: 'ModelError', code: 'rate_limited', retryable: true });
    expect(ModelError.is(error)).toBe(true);
    const copy = Object.assign(new Error('[anthropic] 529 overloaded_error'), {
      [Symbol.for('runner.ModelError')]: true,
      code: 'unavailable',
      retryable: true,
      cause: driverError('ECONNREFUSED'),
    });
    expect(ModelError.is(copy)).toBe(true);
    expect(classifyFailure(copy).failure).toBe('failed');
    expect(ModelError.is(new Error('x'))).toBe(false);
    expect(ModelError.is(undefined)).toBe(false);
  });

  it('gets its code from the status the provider answered, and keeps it when the retries end', async () => {
    const headers = (values: Record<string, string>) => ({
      get: (name: string) => values[name] ?? null,
    });
    expect(statusFailure(429, headers({ 'retry-after': '2' }), 'slow down')).toEqual({
      code: 'rate_limited',
      retryable: true,
      retryAfterMs: 2000,
      message: 'slow down',
    });
    expect(statusFailure(503, undefined, 'down')).toMatchObject({
      code: 'unavailable',
      retryable: true,
    });
    expect(statusFailure(401, undefined, 'bad key')).toMatchObject({
      code: 'refused',
      retryable: false,
    });
    // The server's x-should-retry decides the retry, not what happened.
    expect(statusFailure(400, headers({ 'x-should-retry': 'true' }), 'again')).toMatchObject({
      code: 'refused',
      retryable: true,
    });
    const policy = { retries: 1, baseMs: 0, maxDelayMs: 0, maxRetryAfterMs: 60_000 };
    const limited = await withRetry(
      'test',
      () => Promise.reject(new Error('429')),
      () => statusFailure(429, undefined, '429 rate_limit_error'),
      policy,
      { sleep: async () => {} },
    ).catch((e: unknown) => e);
    expect(limited).toMatchObject({ code: 'rate_limited', retryable: true });
    expect(ModelError.is(limited)).toBe(true);
  });
});

import { type ToolResultBlock, type ToolUseBlock, toolResult } from '@x/wire';
import { ExecutiveError } from './errors.js';
import {
  acceptedArguments,
  type EffectLog,
  type GatedTools,
  ranResult,
  runGatedTool,
} from './gated-tools.js';
import { declinedResult, expiredResult, type HumanAnswer } from './tools.js';

/** The recorded result of an approved gated call: what the model reads, once and for all. */
export interface GatedResult {
  /** The question's token (the call's idempotency key). */
  token: string;
  tool: string;
  arguments: Record<string, unknown>;
  edited: boolean;
  result: string;
}

/** Where the results of approved gated calls are recorded durably, by the question's token. */
export interface GatedResults {
  /** The recorded result of the call asked by `token`, if it ran. */
  result(token: string): Promise<GatedResult | undefined>;
  /** Records a result unless one is recorded already; returns the one that stands. */
  record(given: GatedResult): Promise<GatedResult>;
}

/** What {@link gatedCallResult} needs besides the call and the answer. */
export interface GatedCallOptions {
  /** The question's token: the call's idempotency key and its result's record key. */
  token: string;
  effects: EffectLog;
  results: GatedResults;
  /** The question's deadline, when the answer is its default applied then. */
  expiredAt?: Date | null;
}

/**
 * The tool result a turn resumes from after a person answered a gated call. An accepted call
 * runs first, with the question's token as its idempotency key, and its result is recorded
 * before the model sees it; a later attempt finds the record and never runs it again. A
 * declined call did not run, and the model reads the person's reason.
 *
 * @example
 * const result = await gatedCallResult(gated, use, { action: 'accept', content: '' }, {
 *   token,
 *   effects,
 *   results,
 * });
 */
export async function gatedCallResult(
  gated: GatedTools,
  use: ToolUseBlock,
  answer: HumanAnswer,
  options: GatedCallOptions,
): Promise<ToolResultBlock> {
  const { token, expiredAt } = options;
  if (answer.action !== 'accept') {
    return expiredAt
      ? expiredResult(use.id, answer, expiredAt)
      : declinedResult(use.id, use.name, answer);
  }
  const applied = (text: string) =>
    expiredAt
      ? expiredResult(use.id, { action: answer.action, content: text }, expiredAt)
      : toolResult(use.id, text);
  const recorded = await options.results.result(token);
  if (recorded) return applied(recorded.result);
  // A default applied at the deadline runs the call as the model made it.
  const accepted = acceptedArguments(gated, use.name, use.input, expiredAt ? '' : answer.content);
  // Checked when the answer was taken; a record that fails now would fail on every attempt.
  if ('error' in accepted) throw new ExecutiveError('usage', accepted.error, { tokens: [token] });
  const output = await runGatedTool(gated, use.name, accepted.arguments, {
    key: token,
    effects: options.effects,
  });
  const result = ranResult(use.name, accepted.arguments, accepted.edited, output);
  const stands = await options.results.record({ token, tool: use.name, ...accepted, result });
  return applied(stands.result);
}

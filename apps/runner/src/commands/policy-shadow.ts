import { parseArgs } from 'node:util';
import { type ShadowDisagreement, shadowDisagreements } from '@x/executive';
import { durationMs } from '@x/policy';
import { usageError } from '../errors.js';
import { plural, printable } from '../terminal/output.js';
import { type Context, globalOptions, withStorage } from './command.js';

/** How many disagreements `policy shadow` reads (the oldest first). */
const SHADOW_LIMIT = 1_000;

/** What people made of a disagreement's question, as `policy shadow` prints it. */
function answered({ outcome, token, answer }: ShadowDisagreement): string {
  if (outcome !== 'ask' || token === null) return 'not asked';
  return answer === null ? 'not answered yet' : answer;
}

/** One disagreement as `policy shadow` prints it. */
function disagreementLine(d: ShadowDisagreement): string {
  const candidate = d.shadow.error
    ? `${d.shadow.outcome}, deciding failed: ${d.shadow.error}`
    : `${d.shadow.outcome} (${d.shadow.reason})`;
  return printable(
    [
      `  ${d.decidedAt.toISOString()} run ${d.runId} ${d.tool} ${JSON.stringify(d.arguments)}`,
      `    active: ${d.outcome} (${d.reason})`,
      `    candidate: ${candidate}`,
      `    people: ${answered(d)}`,
    ].join('\n'),
  );
}

/**
 * `runner policy shadow [--since 7d]`: the decisions on which RUNNER_POLICY_SHADOW's candidate
 * disagreed with the active policies (another outcome, or an error), each with what the active
 * set decided, what the candidate would have, and what people answered.
 */
export async function policyShadow(ctx: Context, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...globalOptions, since: { type: 'string', default: '7d' } },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw usageError('policy shadow takes no arguments, only --since');
  const sinceMs = durationMs(values.since);
  if (sinceMs === undefined) {
    throw usageError(`--since takes an age like 7d or 12h, not "${values.since}"`);
  }
  const since = new Date(Date.now() - sinceMs);
  return withStorage(ctx, async (storage) => {
    const found = await shadowDisagreements(storage.db, { since, limit: SHADOW_LIMIT });
    ctx.out.record(
      { type: 'policy-shadow', since: since.toISOString(), disagreements: found },
      [
        `${plural(found.length, 'disagreement')} of the candidate policies since ${since.toISOString()}${found.length === 0 ? '' : ':'}`,
        ...found.map(disagreementLine),
        ...(found.length === SHADOW_LIMIT
          ? [`  (the first ${SHADOW_LIMIT}; --since narrows)`]
          : []),
      ].join('\n'),
    );
    return 0;
  });
}

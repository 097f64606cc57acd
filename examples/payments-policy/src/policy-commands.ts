// `policy test DIR` and `policy replay FILE`: the policies checked before they decide anything.
import { decisionsSince, durationMs, recordedDecisionOf } from '@x/executive';
import {
  type Decision,
  PolicyError,
  type RecordedDecision,
  type ReplayChange,
  readPolicyFixtures,
  replayDecisions,
  runPolicyFixtures,
} from '@x/policy';
import { openStorage, policiesOf } from './payments.js';

/** A set's hash as printed: enough of it to tell two versions apart. */
const short = (hash: string) => `${hash.slice(0, 'sha256:'.length + 12)}…`;

/** What a decision says in one line: the outcome and why. */
function said(decision: Decision): string {
  const asked =
    decision.outcome === 'ask'
      ? ` ${decision.ask.quorum?.approvals ?? 1} of ${decision.ask.audience.roles.join('+') || 'anyone'}${decision.ask.requesterMayNotAnswer ? ', not the requester' : ''}`
      : '';
  return `${decision.outcome}${asked} (${decision.reason})`;
}

/** Decides each fixture case with the policies of `policies/`; 1 when any decided otherwise. */
async function test(paths: string[]): Promise<number> {
  const policies = await policiesOf(['policies']);
  const results = runPolicyFixtures(policies, await readPolicyFixtures(paths));
  for (const { fixture, decision, failures } of results) {
    console.log(`${failures.length === 0 ? 'pass' : 'FAIL'} ${fixture.name}: ${said(decision)}`);
    for (const failure of failures) console.log(`  ${failure}`);
  }
  const failed = results.filter((r) => r.failures.length > 0).length;
  console.log(
    `${failed === 0 ? 'ok' : 'FAILED'}: ${results.length - failed} passed, ${failed} failed, against policies/ (${short(policies.hash)})`,
  );
  return failed === 0 ? 0 : 1;
}

/** One changed outcome: the call, what was decided and answered then, and what the candidate says. */
function changeLine({ recorded, now }: ReplayChange): string {
  const people = recorded.answer === null ? '' : `, people: ${recorded.answer}`;
  return `  ${recorded.call.tool} ${JSON.stringify(recorded.call.input)}: ${recorded.outcome}${people} -> ${said(now)}`;
}

/** Decides every decision recorded in the last `since` again with the candidate's Cedar files. */
async function replay(paths: string[], since: string): Promise<number> {
  const candidate = await policiesOf(paths);
  const sinceMs = durationMs(since);
  if (sinceMs === undefined)
    throw new Error(`--since takes an age like 30d or 12h, not "${since}"`);
  const { db, close } = await openStorage();
  const recorded: RecordedDecision[] = [];
  try {
    for await (const past of decisionsSince(db, new Date(Date.now() - sinceMs))) {
      const decided = recordedDecisionOf(past);
      if (decided !== null) recorded.push(decided);
    }
  } finally {
    await close();
  }
  const startedAt = performance.now();
  const summary = replayDecisions(candidate, recorded);
  const tookMs = Math.round(performance.now() - startedAt);
  const refused = summary.allowedThoughRefused;
  console.log(
    [
      `replayed ${summary.decided} decisions of the last ${since} with ${paths.join(' ')} (${short(candidate.hash)})`,
      `would allow ${summary.askedNowAllowed} of ${summary.asked} asked calls; people declined ${refused.length} of those${refused.length === 0 ? '' : ':'}`,
      ...refused.map(changeLine),
      `${summary.changes.length} outcome${summary.changes.length === 1 ? '' : 's'} would change${summary.changes.length === 0 ? '' : ':'}`,
      ...summary.changes.map(changeLine),
      `decided again in ${tookMs} ms`,
    ].join('\n'),
  );
  return 0;
}

/** `policy test PATH…` or `policy replay PATH… [--since 30d]`; a policy or fixture file refused: 2. */
export async function policyCommand(args: string[], since: string): Promise<number> {
  const [sub, ...paths] = args;
  try {
    if (sub === 'test' && paths.length > 0) return await test(paths);
    if (sub === 'replay' && paths.length > 0) return await replay(paths, since);
  } catch (error) {
    if (!PolicyError.is(error)) throw error;
    console.error(error.message);
    return 2;
  }
  console.error('usage: agent.js policy test DIR | policy replay FILE [--since 30d]');
  return 2;
}

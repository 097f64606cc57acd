// A payments agent on @x/executive whose `pay` calls a Cedar policy decides (policies/):
//   node dist/agent.js start "Pay this month's suppliers"   runs until a payment waits for finance, exits
//   node dist/agent.js answer approve|decline [why] --as bob answers the open question as an operator
//   node dist/agent.js work                                 the worker: resumes ready runs, each once
//   node dist/agent.js policy test policy-tests             decides the fixture files' cases
//   node dist/agent.js policy replay candidate.cedar        what a candidate policy would have decided
import { parseArgs } from 'node:util';
import {
  answer,
  createExecutive,
  decisionsOf,
  policyGate,
  questionPolicyOf,
  recordStart,
  runTurn,
  TURN_KIND,
  turnKind,
} from '@x/executive';
import { textOf, userMessage } from '@x/wire';
import {
  effectLog,
  gated,
  model,
  OPERATORS,
  openStorage,
  policiesOf,
  REQUESTER,
  system,
} from './payments.js';
import { policyCommand } from './policy-commands.js';

const conversationId = 'payments';
// How long a declined or expired payment is refused unasked when the model calls it again.
const policyLimits = { denialWindowMs: Number(process.env.DENIAL_WINDOW_MS ?? 60_000) };
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { as: { type: 'string' }, since: { type: 'string', default: '30d' } },
});
const [command, ...rest] = positionals;

if (command === 'policy') {
  process.exitCode = await policyCommand(rest, values.since);
} else {
  const { storage, db, close } = await openStorage();
  const flow = { storage, events: { wants: () => false, record: async () => {} } };
  const policies = await policiesOf(['policies']);
  const started = new Date();

  /** Prints the decisions the policies made in a run since this command started, one a line. */
  async function printDecisions(runId: string): Promise<void> {
    for (const d of await decisionsOf(db, runId)) {
      if (d.decidedAt < started) continue;
      const verb = { allow: 'allowed', deny: 'denied', ask: 'asked' }[d.outcome];
      console.log(`${verb} ${d.tool} ${JSON.stringify(d.arguments)}: ${d.reason}`);
    }
  }
  /** Prints who the conversation's open question waits for. */
  async function printWaiting(): Promise<void> {
    const [q] = await storage.pauses().listPending(conversationId);
    if (!q) return;
    const who =
      [...q.audience.roles, ...q.audience.names.map((n) => `@${n}`)].join('+') || 'anyone';
    const barred = q.requesterMayNotAnswer && q.requester ? `, not ${q.requester}` : '';
    const within = q.deadline
      ? `, within ${Math.round((q.deadline.at.getTime() - q.createdAt.getTime()) / 60_000)} min (then ${q.deadline.answer.action})`
      : '';
    console.log(`the run waits for ${q.quorum?.approvals ?? 1} of ${who}${barred}${within}`);
  }

  if (command === 'start') {
    const run = { runId: crypto.randomUUID(), conversationId, requester: REQUESTER };
    const gate = policyGate({
      policies,
      storage,
      run,
      requester: REQUESTER,
      gated,
      effects: effectLog(),
      ...policyLimits,
    });
    const turn = await runTurn(
      model,
      [userMessage(rest.join(' '))],
      { event() {} },
      {
        system,
        tools: {},
        gated,
        gate,
      },
    );
    const meta = { model: model.id, requester: REQUESTER };
    const result = await recordStart(flow, run, model, turn, meta, questionPolicyOf(policies));
    await printDecisions(run.runId);
    if (result.status === 'waiting') await printWaiting();
    else console.log(`the run ${result.status}`);
  } else if (command === 'answer') {
    const [action = '', ...why] = rest;
    const roles = OPERATORS[values.as ?? ''];
    const [question] = await storage.pauses().listPending(conversationId);
    if (!['approve', 'decline'].includes(action) || !roles) {
      console.error(
        `usage: agent.js answer approve|decline [why] --as ${Object.keys(OPERATORS).join('|')}`,
      );
      process.exitCode = 2;
    } else if (!question) {
      console.error('no question waits for an answer (run start or work first)');
      process.exitCode = 1;
    } else {
      const given = { action: action === 'approve' ? 'accept' : 'decline', content: why.join(' ') };
      // Checked against the question's audience and quorum, recorded with its run made ready, in one transaction.
      const outcome = await answer(
        flow,
        question.token,
        given as { action: 'accept' | 'decline'; content: string },
        {
          identity: { name: values.as ?? '', roles },
        },
      ).catch((error: Error & { code?: string }) => {
        console.error(`${values.as} may not answer: ${error.message}`);
        process.exitCode = 1;
      });
      if (outcome?.resolved) {
        console.log(`${values.as} ${action}d "${question.question}"; the worker resumes the run`);
      } else if (outcome?.quorum) {
        const { approvals, needed } = outcome.quorum;
        console.log(
          `${values.as} ${action}d: ${approvals.length} of ${needed} approvals, it waits for more`,
        );
      }
    }
  } else if (command === 'work') {
    const executive = createExecutive({
      storage,
      kinds: {
        [TURN_KIND]: turnKind({
          modelFor: () => model,
          system,
          tools: {},
          gated,
          effects: effectLog,
          policies,
          policyLimits,
        }),
      },
      lease: {
        leaseMs: Number(process.env.LEASE_MS ?? 60_000),
        retry: { maxAttempts: 5, baseMs: 1_000 },
      },
    });
    let resumed = 0;
    const runs: string[] = [];
    await executive.work({
      once: true,
      onEvent: (event) => {
        if (event.type !== 'run-resumed') return;
        resumed++;
        runs.push(event.result.runId);
      },
    });
    for (const runId of runs) {
      await printDecisions(runId);
      const run = await storage.runs().get(runId);
      if (run?.status === 'waiting') await printWaiting();
      const last =
        run?.status === 'completed' ? (await storage.runs().transcript(runId))?.at(-1) : undefined;
      if (last) console.log(textOf(last));
      else if (run?.status !== 'waiting') console.log(`the run is ${run?.status}`);
    }
    if (resumed === 0) console.log('nothing to resume');
  } else {
    console.error(
      'usage: agent.js start <request> | answer approve|decline [why] --as NAME | work | policy test DIR | policy replay FILE',
    );
    process.exitCode = 2;
  }
  await close();
}

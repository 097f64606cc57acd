import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { toolResults } from '@x/wire';
import { expect } from 'vitest';
import { type CliResult, finished, type startCli, waitForOutput } from './run-cli.js';
import { expectPaired } from './transcript.js';

/** Runs the CLI against one storage (the test's data folder, or its DATABASE_URL). */
export type Cli = (args: string[]) => Promise<CliResult>;

const TEAM = ['--model', 'scripted:team', '--json'];

/** A worker question as `paused-states list --json` prints it. */
interface WorkerPause {
  token: string;
  conversationId: string;
  proxiedFromChildId: string;
  proxiedToolCallId: string;
  toolCallId: string;
  resumeContext: { delegate: { toolCallId: string; worker: string; task: string } };
}

async function ok(cli: Cli, args: string[]): Promise<CliResult> {
  const result = await cli(args);
  expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(0);
  return result;
}

/** The pending worker questions of a conversation, by worker id. */
export async function workerPauses(
  cli: Cli,
  conversationId: string,
): Promise<Map<string, WorkerPause>> {
  const listed = await ok(cli, ['paused-states', 'list', '--json']);
  const mine = (listed.events as unknown as WorkerPause[]).filter(
    (p) => p.conversationId === conversationId,
  );
  return new Map(mine.map((p) => [p.proxiedFromChildId, p]));
}

/** `exec` of the team scenario: waits on w1's and w2's questions, w3 finished. */
export async function startTeam(cli: Cli, conversationId: string) {
  const exec = await ok(cli, [
    'exec',
    'Plan a Lisbon trip',
    '--conversation',
    conversationId,
    ...TEAM,
  ]);
  const waiting = exec.events.find((e) => e.type === 'run-waiting') as Record<string, unknown>;
  const questions = waiting.questions as Array<{ worker: string; token: string }>;
  expect(questions.map((q) => q.worker)).toEqual(['w1', 'w2']);
  const pauses = await workerPauses(cli, conversationId);
  expect([...pauses.keys()].sort()).toEqual(['w1', 'w2']);
  for (const [worker, pause] of pauses) {
    // One pause per question, carrying the source thread and the worker's own tool call.
    expect(pause.proxiedToolCallId).toMatch(/^toolu_/);
    expect(pause.proxiedToolCallId).not.toBe(pause.toolCallId);
    expect(pause.resumeContext.delegate).toMatchObject({ toolCallId: pause.toolCallId, worker });
    expect(questions.find((q) => q.worker === worker)?.token).toBe(pause.token);
  }
  return pauses;
}

/** Model calls a wake made (workers' and parent's). */
export function modelCalls(result: CliResult): number {
  return result.events.filter((e) => e.type === 'model-call').length;
}

/** The completed run's transcript: paired, with each worker's report once in the delegate result. */
export function expectTeamReport(result: CliResult, answers: { w1: string; w2: string }) {
  const completed = result.events.find((e) => e.type === 'run-completed');
  expect(completed, result.stdout).toBeDefined();
  const messages = expectPaired(completed?.messages);
  const delegated = messages.flatMap((m) => toolResults(m)).map((r) => JSON.stringify(r.content));
  const reports = delegated.filter((text) => text.includes('w1 ('));
  expect(reports).toHaveLength(1);
  const report = reports[0] ?? '';
  for (const [worker, count] of [
    ['w1 (', 1],
    ['w2 (', 1],
    ['w3 (', 1],
    [answers.w1, 1],
    [answers.w2, 1],
  ] as const) {
    expect(report.split(worker).length - 1, `${worker} in ${report}`).toBe(count);
  }
  return messages;
}

/**
 * The unattended flow answered one question at a time, in reverse order: each wake runs
 * only the worker just answered, and the last one resumes the parent once.
 */
export async function oneAtATime(cli: Cli, conversationId: string) {
  const pauses = await startTeam(cli, conversationId);
  await ok(cli, ['answer', pauses.get('w2')?.token ?? '', '--accept', 'evening']);
  const first = await ok(cli, ['wake', '--once', '--json']);
  // Only w2 ran (one model call); the run waits again on w1's same question.
  expect(modelCalls(first)).toBe(1);
  const waiting = first.events.find((e) => e.type === 'run-waiting');
  expect(waiting).toMatchObject({ token: pauses.get('w1')?.token });
  const left = await workerPauses(cli, conversationId);
  expect([...left.keys()]).toEqual(['w1']);
  expect(left.get('w1')?.token).toBe(pauses.get('w1')?.token);
  // The operator sees the source thread and the sub-task.
  const listed = await ok(cli, ['paused-states', 'list']);
  expect(listed.stdout).toContain(
    `worker w1 of conversation ${conversationId} (via delegate): Choose the hotel for the Lisbon trip`,
  );
  expect(listed.stdout).not.toContain('Morning or evening flight?');

  await ok(cli, ['answer', pauses.get('w1')?.token ?? '', '--option', '2']);
  const second = await ok(cli, ['wake', '--once', '--json']);
  // w1 once, then the parent once; w2 and w3 are not run again.
  expect(modelCalls(second)).toBe(2);
  expectTeamReport(second, { w1: '100 to 200 EUR', w2: 'evening' });
  const idle = await ok(cli, ['wake', '--once', '--json']);
  expect(idle.events.map((e) => e.type)).toEqual(['idle']);

  // The tree: the parent run, its delegate call, each worker with its question and answer.
  const shown = (await ok(cli, ['show', conversationId])).stdout;
  for (const line of [
    'delegate toolu_',
    '    w1 Choose the hotel for the Lisbon trip — finished: Hotel: a place in Alfama, 100 to 200 EUR a night.',
    '      ? Which hotel budget per night?  → accept "100 to 200 EUR"',
    '    w2 Choose the flight to Lisbon — finished: Flight: the evening flight.',
    '      ? Morning or evening flight?  → accept "evening"',
    '    w3 Check the weather in Lisbon — finished: Weather: clear, 12°C.',
  ]) {
    expect(shown).toContain(line);
  }
}

/** Both questions answered in one batch: one wake resumes both workers and the parent. */
export async function inOneBatch(cli: Cli, conversationId: string, scratch: string) {
  const pauses = await startTeam(cli, conversationId);
  const file = path.join(scratch, `${conversationId}.json`);
  writeFileSync(
    file,
    JSON.stringify([
      { token: pauses.get('w1')?.token, action: 'accept', content: 'under 100 EUR' },
      { token: pauses.get('w2')?.token, action: 'accept', content: 'morning' },
    ]),
  );
  await ok(cli, ['answer', '--batch', file]);
  const woken = await ok(cli, ['wake', '--once', '--json']);
  expect(modelCalls(woken)).toBe(3);
  expectTeamReport(woken, { w1: 'under 100 EUR', w2: 'morning' });
}

/** Cancelling one worker's question aborts the delegated turn and closes the other question. */
export async function cancelled(cli: Cli, conversationId: string) {
  const pauses = await startTeam(cli, conversationId);
  await ok(cli, ['answer', pauses.get('w1')?.token ?? '', '--cancel']);
  const woken = await ok(cli, ['wake', '--once', '--json']);
  expect(woken.events.some((e) => e.type === 'run-cancelled')).toBe(true);
  expect((await workerPauses(cli, conversationId)).size).toBe(0);
}

/**
 * w1 is answered while a running wake resumes w2 (slowed down): the run waits again at its
 * terminal write and is made ready at once, so the same wake finishes it with no new answer.
 */
export async function answeredDuringResume(
  cli: Cli,
  wake: (env: Record<string, string>) => ReturnType<typeof startCli>,
  conversationId: string,
) {
  const pauses = await startTeam(cli, conversationId);
  await ok(cli, ['answer', pauses.get('w2')?.token ?? '', '--accept', 'evening']);
  const running = wake({ RUNNER_SCRIPTED_DELAY_MS: '1500' });
  try {
    await waitForOutput(running, '"type":"model-call"');
    await ok(cli, ['answer', pauses.get('w1')?.token ?? '', '--option', '1']);
    await waitForOutput(running, '"type":"run-completed"');
  } finally {
    running.kill('SIGTERM');
    await finished(running);
  }
  const events = running.output.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { type: string } & Record<string, unknown>);
  expect(events.filter((e) => e.type === 'model-call')).toHaveLength(3);
  expectTeamReport({ ...(await cli(['--help'])), events }, { w1: 'under 100 EUR', w2: 'evening' });
}

import { parseArgs } from 'node:util';
import { assertSafeId } from '@x/continuation';
import type { LeaseRecord, RunRecord, RunStatus } from '@x/continuation-postgres';
import { usageError } from '../errors.js';
import { deadlineText } from '../executive/index.js';
import { type Command, globalOptions, withStorage } from './command.js';

const STATUSES: readonly RunStatus[] = [
  'running',
  'waiting',
  'ready',
  'completed',
  'cancelled',
  'failed',
];

/** One line about a run, for people. */
export function describeRun(
  run: RunRecord,
  command: (line: string) => string,
  now = Date.now(),
  holder?: LeaseRecord['holder'],
): string {
  const parts = [`${run.runId}  ${run.status.padEnd(9)} [${run.conversationId}]`];
  if (run.attempts) parts.push(`attempt ${run.attempts}`);
  if (run.status === 'running' && holder === 'gone') {
    parts.push(`held by ${run.leaseOwner}, whose process is gone: claimable now`);
  } else if (run.status === 'running' && run.leaseExpiresAt) {
    parts.push(
      `held by ${run.leaseOwner} for ${Math.max(0, Math.round((run.leaseExpiresAt.getTime() - now) / 1000))} s more`,
    );
  }
  if (run.status === 'ready' && run.readyAt && run.readyAt.getTime() > now) {
    parts.push(`retry in ${Math.ceil((run.readyAt.getTime() - now) / 1000)} s`);
  }
  if (run.status === 'waiting' && run.interactionId) parts.push(`on question ${run.interactionId}`);
  if (run.status === 'waiting' && run.deadlineAt) parts.push(deadlineText(run.deadlineAt, now));
  parts.push(`updated ${run.updatedAt.toISOString()}`);
  if (run.lastError) parts.push(`\n    last error: ${run.lastError}`);
  if (run.status === 'failed') parts.push(`\n    retry it: ${command(`retry ${run.runId}`)}`);
  return parts.join('  ');
}

/** `runner runs [--conversation C] [--status S] [--limit N]`: recorded runs, newest first. */
export const runs: Command = async (ctx, args) => {
  const { values } = parseArgs({
    args,
    options: {
      ...globalOptions,
      conversation: { type: 'string' },
      status: { type: 'string' },
      limit: { type: 'string' },
    },
  });
  const status = values.status as RunStatus | undefined;
  if (status !== undefined && !STATUSES.includes(status)) {
    throw usageError(`--status takes one of ${STATUSES.join(', ')}, not "${status}"`);
  }
  if (values.conversation !== undefined) assertSafeId('--conversation', values.conversation);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 10_000)) {
    throw usageError('--limit takes a whole number from 1 to 10000');
  }
  return withStorage(ctx, async (storage) => {
    const list = await storage.runs().list({
      ...(values.conversation === undefined ? {} : { conversationId: values.conversation }),
      ...(status === undefined ? {} : { status }),
      ...(limit === undefined ? {} : { limit }),
    });
    // Whether each lease's holder lives: only the queue can tell (it asks the server).
    const holders = new Map<string, LeaseRecord['holder']>();
    if (list.some((run) => run.status === 'running')) {
      for (const lease of await storage.runs().leases({ limit: 10_000 })) {
        holders.set(lease.runId, lease.holder);
      }
    }
    for (const run of list) {
      const holder = holders.get(run.runId);
      ctx.out.record(
        { type: 'run', ...run, ...(holder ? { leaseHolder: holder } : {}) },
        describeRun(run, ctx.out.command, Date.now(), holder),
      );
    }
    if (list.length === 0) {
      ctx.out.record({ type: 'none' }, 'no runs match');
    }
    return 0;
  });
};

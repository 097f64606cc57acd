import { parseArgs } from 'node:util';
import { priorityLabel } from '@x/approval-center';
import {
  AskUserError,
  optionLabel,
  type PauseRecord,
  type Pending,
  shownOptions,
} from '@x/askuser';
import { assertSafeId } from '@x/continuation';
import { durationMs } from '@x/executive';
import { notFoundError, usageError } from '../errors.js';
import {
  deadlineText,
  howAnswered,
  noQuestionWith,
  OPEN_RUN_STATUSES,
  type ResumeContext,
} from '../executive/index.js';
import { plural, printable } from '../terminal/output.js';
import { workerLabel } from '../terminal/turn-output.js';
import { type Command, type Context, globalOptions, withStorage } from './command.js';

/**
 * Parses an age like `30m`, `12h`, `7d` (or `500ms`) into milliseconds; `flag` and `like`
 * name the option and its examples in the usage error.
 */
export function parseAge(
  text: string,
  flag = '--older-than',
  like = 'an age like 30m, 12h or 7d',
): number {
  const ms = durationMs(text);
  if (ms === undefined) throw usageError(`${flag} takes ${like}, not "${text}"`);
  return ms;
}

/** The source thread of a worker's question, on a line of its own; '' for the turn's own. */
function sourceOf(pause: Pending): string {
  if (!pause.proxiedFromChildId) return '';
  const task = (pause.resumeContext as ResumeContext | null)?.delegate?.task ?? '';
  return `\n    ${workerLabel(pause.proxiedFromChildId, pause.conversationId, task)}`;
}

/** The priority as the page says it (` urgent`, ` high`), nothing for the default 0. */
function priorityOf(p: Pending): string {
  const label = priorityLabel(p.priority);
  return label ? ` ${label}` : '';
}

/** Why a policy asked the question, on a line of its own; '' when no rule did. */
function askedBecause(pause: Pending): string {
  const policy = (pause.resumeContext as ResumeContext | null)?.policy;
  if (!policy || policy.ruleIds.length === 0) return '';
  return `\n    asked because ${printable(policy.reason)}`;
}

/** One line about a pending question (and its source thread, for a worker's). */
function describePending(p: Pending): string {
  const shown = shownOptions(p.options);
  const options = shown
    ? `  options: ${shown.map((o, i) => `${i + 1}) ${optionLabel(o)}`).join(' ')}`
    : '';
  const deadline = p.deadline
    ? `  ${deadlineText(p.deadline.at)}, then ${p.deadline.answer.action}`
    : '';
  const quorum = p.quorum ? `  needs ${p.quorum.approvals} approvals` : '';
  return `${p.token}  [${p.conversationId}]${priorityOf(p)} ${p.kind}: ${p.question}${options}${deadline}${quorum}${sourceOf(p)}${askedBecause(p)}`;
}

/** One line about any question: pending (…), or how and by whom it was answered (✓). */
function describeRecord(
  r: Pick<PauseRecord, 'answer' | 'answeredBy' | 'resumedAt' | 'expiredAt'> & Pending,
) {
  const { answer } = r;
  if (!answer) return `… ${describePending(r)}`;
  return `✓ ${r.token}  [${r.conversationId}]${priorityOf(r)} ${r.kind}: ${r.question}  → ${howAnswered({ ...r, answer })}${sourceOf(r)}`;
}

/** `runner paused-states list|get|purge`: the questions, pending or all; purging old answers. */
export const pausedStates: Command = async (ctx, args) => {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      ...globalOptions,
      all: { type: 'boolean' },
      limit: { type: 'string' },
      conversation: { type: 'string' },
      'older-than': { type: 'string' },
      'dry-run': { type: 'boolean' },
    },
    allowPositionals: sub === 'get',
  });
  if (sub === 'list') return list(ctx, values);
  if (sub === 'get') return get(ctx, positionals);
  if (sub === 'purge') return purge(ctx, values);
  throw usageError('paused-states takes list, get or purge');
};

/** `list [--all | --conversation C] [--limit N]`: the pending questions, or all kept ones. */
function list(
  ctx: Context,
  values: { all?: boolean; limit?: string; conversation?: string },
): Promise<number> {
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1))
    throw usageError(`--limit takes a whole number from 1, not "${values.limit}"`);
  if (values.conversation !== undefined) assertSafeId('--conversation', values.conversation);
  if (values.conversation !== undefined && values.all)
    throw usageError('list takes --all or --conversation C, not both');
  return withStorage(ctx, async (storage) => {
    const pauses = storage.pauses();
    if (values.all) {
      const records = await pauses.listRecent(limit);
      for (const r of records) ctx.out.record({ type: 'pause', ...r }, describeRecord(r));
      if (!records.length) {
        ctx.out.note(
          'no questions kept: none is pending, and answered ones are gone (purged, or none asked yet)',
        );
      }
      return 0;
    }
    const pending =
      values.conversation === undefined
        ? await pauses.listPendingAll(limit)
        : (await pauses.listPending(values.conversation)).slice(0, limit);
    for (const p of pending) ctx.out.record({ type: 'pause', ...p }, describePending(p));
    if (!pending.length) {
      ctx.out.note(
        values.conversation === undefined
          ? 'no pending questions'
          : `no pending questions in conversation ${values.conversation}`,
      );
    }
    return 0;
  });
}

/** `get TOKEN`: one question, pending or answered. */
function get(ctx: Context, positionals: string[]): Promise<number> {
  const [token] = positionals;
  if (!token || positionals.length > 1) throw usageError('get needs one TOKEN');
  return withStorage(ctx, async (storage) => {
    const pauses = storage.pauses();
    // The pending question (GetByToken), else the answered one with its answer.
    const found = await pauses.getByToken(token).then(
      (p) => ({ ...p, answer: null, answeredBy: null, resumedAt: null }),
      async (error: unknown) => {
        if (!AskUserError.hasCode(error, 'not_found')) throw error;
        const answered = await pauses.getAnswer(token).catch((missing: unknown) => {
          if (!AskUserError.hasCode(missing, 'not_found')) throw missing;
          throw notFoundError(noQuestionWith([token]));
        });
        if (!answered) throw error;
        return answered;
      },
    );
    const { answer } = found;
    ctx.out.record(
      { type: 'pause', ...found, resumed: answer !== null },
      answer === null ? describePending(found) : describeRecord(found),
    );
    return 0;
  });
}

/** `purge --older-than AGE [--dry-run]`: deletes old answers and finished runs. */
function purge(
  ctx: Context,
  values: { 'older-than'?: string; 'dry-run'?: boolean },
): Promise<number> {
  if (values['older-than'] === undefined) throw usageError('purge needs --older-than AGE, e.g. 7d');
  const cutoff = new Date(Date.now() - parseAge(values['older-than']));
  const dryRun = values['dry-run'] === true;
  return withStorage(ctx, async (storage) => {
    const { deleted, kept, runs } = await storage.transaction(async (tx) => {
      // A run that may yet resume reads its questions and answers (show, a delegate call's
      // workers): its conversation's are kept, whatever their age.
      const keepConversations = await storage.runs(tx).conversationsWith(OPEN_RUN_STATUSES);
      const pauses = storage.pauses(tx);
      const old = await pauses.cleanupResumedOlderThan(cutoff, { dryRun: true });
      const deleted = await pauses.cleanupResumedOlderThan(cutoff, { keepConversations, dryRun });
      const runs = await storage.runs(tx).purgeFinishedBefore(cutoff, { dryRun });
      return { deleted, kept: old - deleted, runs };
    });
    const what = `${plural(deleted, 'answered question')} and ${plural(runs, 'finished run')} older than ${cutoff.toISOString()}`;
    const keptLine = kept
      ? `; kept ${plural(kept, 'answered question')} of runs not finished (waiting, ready, running or failed)`
      : '';
    ctx.out.record(
      { type: 'purged', dryRun, deleted, runs, kept, cutoff: cutoff.toISOString() },
      dryRun
        ? `would delete ${what}${keptLine}; nothing was deleted (--dry-run)`
        : `deleted ${what}${keptLine}`,
    );
    return 0;
  });
}

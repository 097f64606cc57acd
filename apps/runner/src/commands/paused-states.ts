import { parseArgs } from 'node:util';
import type { Pending } from '@x/askuser';
import { usageError } from '../errors.js';
import type { ResumeContext } from '../executive/index.js';
import { type Command, globalOptions, withStorage, workerLabel } from './context.js';

/** Parses an age like `30m`, `12h`, `7d` into milliseconds. */
export function parseAge(text: string): number {
  const match = /^(\d+)\s*(s|m|h|d|w)$/.exec(text.trim());
  if (!match) throw usageError(`--older-than takes an age like 30m, 12h or 7d, not "${text}"`);
  const unit = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 }[match[2] as 's'];
  return Number(match[1]) * unit;
}

/** The source thread of a worker's question, on a line of its own; '' for the turn's own. */
function sourceOf(pause: Pending): string {
  if (!pause.proxiedFromChildId) return '';
  const task = (pause.resumeContext as ResumeContext | null)?.delegate?.task ?? '';
  return `\n    ${workerLabel(pause.proxiedFromChildId, pause.conversationId, task)}`;
}

/** `runner paused-states list|purge`: the questions, pending or all; purging old answers. */
export const pausedStates: Command = async (ctx, args) => {
  const [sub, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: {
      ...globalOptions,
      all: { type: 'boolean' },
      limit: { type: 'string' },
      'older-than': { type: 'string' },
    },
  });
  if (sub === 'list') {
    const limit = values.limit === undefined ? undefined : Number(values.limit);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1))
      throw usageError('--limit takes a whole number from 1');
    return withStorage(ctx, async (storage) => {
      const pauses = storage.pauses();
      if (values.all) {
        const records = await pauses.listRecent(limit);
        for (const r of records) {
          const answer = r.answer
            ? `  → ${r.answer.action}${r.answer.content ? ` "${r.answer.content}"` : ''}`
            : '';
          ctx.out.record(
            { type: 'pause', ...r },
            `${r.resumed ? '✓' : '…'} ${r.token}  [${r.conversationId}] p${r.priority} ${r.kind}: ${r.question}${answer}${sourceOf(r)}`,
          );
        }
        if (!records.length) ctx.out.note('no questions yet');
        return 0;
      }
      const pending = await pauses.listPendingAll(limit);
      for (const p of pending) {
        const options = Array.isArray(p.options)
          ? `  options: ${(p.options as string[]).map((o, i) => `${i + 1}) ${o}`).join(' ')}`
          : '';
        ctx.out.record(
          { type: 'pause', ...p },
          `${p.token}  [${p.conversationId}] p${p.priority} ${p.kind}: ${p.question}${options}${sourceOf(p)}`,
        );
      }
      if (!pending.length) ctx.out.note('no pending questions');
      return 0;
    });
  }
  if (sub === 'purge') {
    if (values['older-than'] === undefined)
      throw usageError('purge needs --older-than AGE, e.g. 7d');
    const cutoff = new Date(Date.now() - parseAge(values['older-than']));
    return withStorage(ctx, async (storage) => {
      const deleted = await storage.pauses().cleanupResumedOlderThan(cutoff);
      const runs = await storage.runs().purgeFinishedBefore(cutoff);
      ctx.out.record(
        { type: 'purged', deleted, runs, cutoff: cutoff.toISOString() },
        `deleted ${deleted} answered question(s) and ${runs} finished run(s) older than ${cutoff.toISOString()}`,
      );
      return 0;
    });
  }
  throw usageError('paused-states takes list or purge');
};

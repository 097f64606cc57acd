import { parseArgs } from 'node:util';
import { type AuditEntry, auditHead, exportAudit, verifyAudit } from '@x/askuser';
import { FAILURES, usageError } from '../errors.js';
import type { Storage } from '../storage/index.js';
import { plural } from '../terminal/output.js';
import { type Command, type Context, globalOptions, withStorage } from './command.js';
import { parseAge } from './paused-states.js';

/** How to turn the audit log on where it is off (PostgreSQL without a key). */
const TURN_ON =
  'the audit log is off: no audit key. Set RUNNER_AUDIT_KEY_FILE to a file holding a secret of at least 16 bytes (e.g. `openssl rand -hex 32 > /etc/runner/audit.key; chmod 600 /etc/runner/audit.key`), or RUNNER_AUDIT_KEY, for every runner process of this database; what happens after that is recorded';

/** `--since`: an ISO time, or an age like 7d (that long ago). */
function sinceOf(text: string): Date {
  if (/^\d+\s*(ms|s|m|h|d|w)$/.test(text.trim())) {
    return new Date(Date.now() - parseAge(text, '--since'));
  }
  const at = new Date(text);
  if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
    throw usageError(
      `--since takes a time like 2026-01-31T12:00:00Z or an age like 7d, not "${text}"`,
    );
  }
  return at;
}

/** What an entry records, in a few words. */
function summary(entry: AuditEntry): string {
  const d = (entry.data ?? {}) as Record<string, unknown>;
  const answer = () => {
    const content = typeof d.content === 'string' && d.content ? ` "${d.content}"` : '';
    const by = d.by ? ` by ${String(d.by)}` : '';
    const via = d.channel ? ` via ${String(d.channel)}` : '';
    return `${String(d.action)}${content}${by}${via}`;
  };
  switch (entry.kind) {
    case 'question-created':
      return `${String(d.kind)}: ${String(d.question)}${d.runId ? ` (run ${String(d.runId)})` : ''}`;
    case 'question-answered':
    case 'question-cancelled':
      return answer();
    case 'answer-refused':
      return `${String(d.reason)}: ${answer()}`;
    case 'question-purged':
      return `${plural(Array.isArray(d.tokens) ? d.tokens.length : 0, 'question')} purged`;
    case 'chains-sealed':
      return `sealed ${plural(Array.isArray(d.heads) ? d.heads.length : 0, 'chain')}`;
    case 'chain-purged':
      return `entries up to ${String(d.throughSeq)} purged`;
    case 'app-event': {
      // The runner's own events (an operator added, revoked, a key rotated) read as a line.
      if (typeof d.event !== 'string' || typeof d.name !== 'string') return JSON.stringify(d);
      const roles = Array.isArray(d.roles) ? ` (${d.roles.join(', ')})` : '';
      const by = d.by ? ` by ${String(d.by)}` : '';
      const via = d.channel ? ` via ${String(d.channel)}` : '';
      return `${d.event} ${d.name}${roles}${by}${via}`;
    }
    default:
      return JSON.stringify(d);
  }
}

function list(ctx: Context, storage: Storage, values: { conversation?: string; since?: string }) {
  return async () => {
    const options = {
      ...(values.conversation === undefined ? {} : { conversationId: values.conversation }),
      ...(values.since === undefined ? {} : { since: sinceOf(values.since) }),
    };
    let count = 0;
    for await (const entry of exportAudit(storage.db, options)) {
      count++;
      const at = entry.at.toISOString();
      ctx.out.record(
        { type: 'audit-entry', ...entry, at },
        `${at}  ${entry.chain} #${entry.seq}  ${entry.kind}${entry.token ? `  ${entry.token}` : ''}  ${summary(entry)}`,
      );
    }
    if (count === 0) ctx.out.note(storage.auditKey() ? 'no audit entries' : TURN_ON);
    return 0;
  };
}

/** `runner audit [--conversation C] [--since T]`, `audit verify`, `audit head`. */
export const audit: Command = async (ctx, args) => {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...globalOptions,
      conversation: { type: 'string' },
      since: { type: 'string' },
    },
    allowPositionals: true,
  });
  const [sub, ...rest] = positionals;
  if (rest.length > 0) throw usageError(`audit ${sub} takes no argument "${rest[0]}"`);
  if (sub !== undefined && sub !== 'verify' && sub !== 'head') {
    throw usageError(`audit takes verify, head, or no subcommand to list entries, not "${sub}"`);
  }
  if (sub !== undefined && (values.conversation !== undefined || values.since !== undefined)) {
    throw usageError(`--conversation and --since are for listing entries, not for audit ${sub}`);
  }
  if (values.since !== undefined) sinceOf(values.since);
  return withStorage(ctx, async (storage) => {
    if (sub === undefined) return list(ctx, storage, values)();
    if (sub === 'head') {
      const head = await auditHead(storage.db);
      ctx.out.record(
        { type: 'audit-head', head: head ?? null },
        head
          ? `${head.hash}  (global #${head.seq})`
          : `no seal yet: the wake loop seals the conversations' chains into the global one${storage.auditKey() ? '' : `; ${TURN_ON}`}`,
      );
      return 0;
    }
    const key = storage.auditKey();
    if (key === undefined) throw usageError(TURN_ON);
    const result = await verifyAudit(storage.db, { key });
    const read = `${plural(result.entries, 'entry', 'entries')} in ${plural(result.chains, 'chain')}`;
    if (result.ok) {
      ctx.out.record({ type: 'audit-verified', ...result }, `verified ${read}: no tampering found`);
      return 0;
    }
    const [first] = result.problems;
    ctx.out.record(
      { type: 'audit-verified', ...result },
      [
        `verification FAILED (${read}):`,
        ...result.problems.map(
          (p) =>
            `  ${p.chain} #${p.seq}${p.id === null ? ' (missing)' : ` entry ${p.id}`}${p.token ? ` (question ${p.token})` : ''}: ${p.reason}`,
        ),
      ].join('\n'),
    );
    ctx.out.error(
      `the audit log does not verify: first bad entry ${first?.chain} #${first?.seq}${first?.id ? ` (entry ${first.id})` : ''}`,
      { failure: 'failed', exitCode: FAILURES.failed.exitCode },
    );
    return FAILURES.failed.exitCode;
  });
};

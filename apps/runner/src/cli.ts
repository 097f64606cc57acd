#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AskUserError, type ResumeAnswer } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import type { TurnObserver } from './agent.js';
import { runChat } from './chat.js';
import { HELP } from './cli-help.js';
import { type RunResult, startRun, stopConversation } from './executive.js';
import { modelFromId } from './model/index.js';
import { createOutput, type Output } from './output.js';
import { DataFolderLockedError, migrateAll, openStorage, type Storage } from './storage.js';
import { wake } from './wake.js';

/** Exit codes, as `runner --help` documents them. */
export const EXIT = { ok: 0, failed: 1, usage: 2, notFound: 3, unavailable: 4 } as const;

class UsageError extends Error {}

const globalOptions = {
  data: { type: 'string' },
  model: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface Context {
  out: Output;
  dataDir: string;
  modelId: string;
  command: string;
  open(): Promise<Storage>;
}

function observer(out: Output, extra: Record<string, unknown> = {}): TurnObserver {
  return {
    event: (event) => out.event(out.json ? { ...event, ...extra } : event),
    modelCall: () => out.record({ type: 'model-call', ...extra }, undefined),
  };
}

function report(out: Output, result: RunResult): void {
  switch (result.status) {
    case 'completed':
      out.record(
        { type: 'run-completed', conversationId: result.conversationId, messages: result.messages },
        `\n✓ completed (conversation ${result.conversationId})`,
      );
      break;
    case 'waiting':
      out.record(
        {
          type: 'run-waiting',
          status: 'waiting',
          conversationId: result.conversationId,
          token: result.token,
          question: result.question,
        },
        `\n? ${result.question}\nwaiting — token ${result.token}\n  answer: runner answer ${result.token} --accept "..."  (or --option N, --decline, --cancel)`,
      );
      break;
    case 'cancelled':
      out.record(
        { type: 'run-cancelled', conversationId: result.conversationId },
        `✗ cancelled (conversation ${result.conversationId})`,
      );
      break;
  }
}

async function withStorage<T>(ctx: Context, fn: (storage: Storage) => Promise<T>): Promise<T> {
  const storage = await ctx.open();
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}

function newId(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

async function cmdExec(ctx: Context, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...globalOptions, conversation: { type: 'string' } },
    allowPositionals: true,
  });
  const goal = positionals.join(' ').trim();
  if (!goal) throw new UsageError('exec needs a GOAL, e.g. runner exec "Plan a trip"');
  const conversationId = values.conversation ?? newId('c');
  const model = modelFromId(ctx.modelId);
  return withStorage(ctx, async (storage) => {
    const result = await startRun(
      storage,
      model,
      goal,
      conversationId,
      observer(ctx.out, { conversationId }),
    );
    if (result.stopped.pauses > 0) {
      ctx.out.note(`stopped ${result.stopped.pauses} open question(s) of ${conversationId} first`);
    }
    report(ctx.out, result);
    return EXIT.ok;
  });
}

function parseAnswer(
  values: {
    accept?: string | undefined;
    option?: string | undefined;
    decline?: boolean | undefined;
    cancel?: boolean | undefined;
  },
  rest: string[],
): { answer?: ResumeAnswer; option?: number } {
  const given = [
    values.accept !== undefined,
    values.option !== undefined,
    values.decline,
    values.cancel,
  ].filter(Boolean);
  if (given.length !== 1) {
    throw new UsageError(
      'give exactly one of --accept TEXT, --option N, --decline [TEXT], --cancel',
    );
  }
  if (values.accept !== undefined) return { answer: { action: 'accept', content: values.accept } };
  if (values.decline) return { answer: { action: 'decline', content: rest.join(' ') } };
  if (values.cancel) return { answer: { action: 'cancel', content: '' } };
  const option = Number(values.option);
  if (!Number.isInteger(option) || option < 1)
    throw new UsageError('--option takes a number from 1');
  return { option };
}

function readBatch(file: string): Array<{ token: string; answer: ResumeAnswer }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read batch file ${file}: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed))
    throw new UsageError('the batch file must hold a JSON array of {token, action, content}');
  return parsed.map((entry, i) => {
    const e = entry as Record<string, unknown>;
    if (typeof e?.token !== 'string')
      throw new UsageError(`batch entry ${i}: "token" must be a string`);
    return {
      token: e.token,
      answer: { action: e.action, content: e.content ?? '' } as ResumeAnswer,
    };
  });
}

async function cmdAnswer(ctx: Context, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...globalOptions,
      accept: { type: 'string' },
      option: { type: 'string' },
      decline: { type: 'boolean' },
      cancel: { type: 'boolean' },
      batch: { type: 'string' },
    },
    allowPositionals: true,
  });
  if (values.batch !== undefined) {
    if (positionals.length) throw new UsageError('--batch takes no TOKEN');
    const batch = readBatch(values.batch);
    return withStorage(ctx, async (storage) => {
      await storage.pauses().markResumedBatch(batch);
      ctx.out.record(
        { type: 'answered', tokens: batch.map((b) => b.token) },
        `answered ${batch.length} question(s)`,
      );
      return EXIT.ok;
    });
  }
  const [token, ...rest] = positionals;
  if (!token) throw new UsageError('answer needs a TOKEN (see runner paused-states list)');
  const parsed = parseAnswer(values, rest);
  return withStorage(ctx, async (storage) => {
    const pauses = storage.pauses();
    let answer = parsed.answer;
    if (!answer) {
      const pending = await pauses.getByToken(token);
      const options = Array.isArray(pending.options) ? (pending.options as unknown[]) : [];
      const chosen = options[(parsed.option ?? 0) - 1];
      if (typeof chosen !== 'string') {
        throw new UsageError(
          options.length
            ? `--option ${parsed.option}: the question has options 1 to ${options.length}`
            : '--option: this question has no options; use --accept TEXT',
        );
      }
      answer = { action: 'accept', content: chosen };
    }
    await pauses.markResumed(token, answer);
    ctx.out.record(
      { type: 'answered', token, answer },
      `answered ${token}: ${answer.action}${answer.content ? ` "${answer.content}"` : ''}`,
    );
    return EXIT.ok;
  });
}

async function cmdWake(ctx: Context, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { ...globalOptions, once: { type: 'boolean' }, concurrency: { type: 'string' } },
  });
  const concurrency = Number(values.concurrency ?? 1);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new UsageError('--concurrency takes a whole number from 1 to 64');
  }
  // Not withStorage: after a database outage the wake loop may swap in a fresh storage,
  // and the one in use at the end is the one to close.
  let storage = await ctx.open();
  try {
    let workers = concurrency;
    if (storage.kind === 'embedded' && workers > 1) {
      ctx.out.note('the embedded database runs one transaction at a time: using one worker');
      workers = 1;
    }
    let stop = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (!values.once) ctx.out.note(`waiting for answers in ${storage.where} (Ctrl-C to stop)`);
    const pollMs = Number(process.env.RUNNER_WAKE_POLL_MS) || undefined;
    const outcome = await wake(storage, {
      once: Boolean(values.once),
      concurrency: workers,
      pollMs,
      modelFor: (id) => modelFromId(id || ctx.modelId),
      observerFor: (token, conversationId) => observer(ctx.out, { token, conversationId }),
      onResumed: ({ token, answer, result }) => {
        ctx.out.record(
          {
            type: 'resumed',
            token,
            action: answer.action,
            status: result.status,
            conversationId: result.conversationId,
          },
          `resumed ${token} (${answer.action})`,
        );
        report(ctx.out, result);
      },
      onRetry: (token, error, wait) =>
        ctx.out.error(
          `resuming ${token} failed (${(error as Error)?.message ?? error}); it stays answered, retry in ${Math.round(wait / 1000)}s`,
        ),
      onUnavailable: (error, wait) =>
        ctx.out.error(
          `database unavailable (${(error as Error)?.message ?? error}); retrying in ${Math.round(wait / 1000)}s`,
        ),
      stop: stopped,
      reopen:
        storage.kind === 'postgres'
          ? async () => {
              const fresh = await ctx.open();
              await storage.close().catch(() => {});
              storage = fresh;
              return fresh;
            }
          : undefined,
    });
    storage = outcome.storage;
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    return outcome.failed > 0 && values.once ? EXIT.failed : EXIT.ok;
  } finally {
    await storage.close();
  }
}

async function cmdStop(ctx: Context, args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  const [conversationId] = positionals;
  if (!conversationId || positionals.length > 1)
    throw new UsageError('stop needs one CONVERSATION id');
  return withStorage(ctx, async (storage) => {
    const closed = await stopConversation(storage, conversationId);
    ctx.out.record(
      { type: 'stopped', conversationId, ...closed },
      `stopped ${conversationId}: ${closed.pauses} open question(s) closed, ${closed.continuations} saved run(s) resolved`,
    );
    return EXIT.ok;
  });
}

async function cmdServe(ctx: Context, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...globalOptions,
      host: { type: 'string' },
      port: { type: 'string' },
      token: { type: 'string' },
      'no-wake': { type: 'boolean' },
    },
  });
  const port = Number(values.port ?? 4319);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError('--port takes a number from 0 to 65535');
  const host = values.host ?? '127.0.0.1';
  const token = values.token ?? (process.env.RUNNER_TOKEN || undefined);
  const { assertServeAllowed, startServe } = await import('./serve/index.js');
  assertServeAllowed(host, token);
  return withStorage(ctx, async (storage) => {
    const server = await startServe(storage, {
      host,
      port,
      token,
      wake: !values['no-wake'],
      modelFor: (id) => modelFromId(id || ctx.modelId),
      databaseUrl: process.env.DATABASE_URL || undefined,
      onResumed: ({ token: resumed, answer, result }) =>
        ctx.out.record(
          {
            type: 'resumed',
            token: resumed,
            action: answer.action,
            status: result.status,
            conversationId: result.conversationId,
          },
          `resumed ${resumed} (${answer.action}) → ${result.status}`,
        ),
      onError: (line) => ctx.out.error(line),
    });
    const stopped = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    ctx.out.record(
      { type: 'listening', url: server.url, where: storage.where, wake: !values['no-wake'] },
      `approval center on ${server.url} (${storage.where}${values['no-wake'] ? '' : ', resuming answered runs'}); Ctrl-C to stop` +
        (token ? '\nopen it once as URL?token=YOUR_TOKEN to sign the browser in' : ''),
    );
    await stopped;
    await server.close();
    return EXIT.ok;
  });
}

/** Parses an age like `30m`, `12h`, `7d` into milliseconds. */
export function parseAge(text: string): number {
  const match = /^(\d+)\s*(s|m|h|d|w)$/.exec(text.trim());
  if (!match) throw new UsageError(`--older-than takes an age like 30m, 12h or 7d, not "${text}"`);
  const unit = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 }[match[2] as 's'];
  return Number(match[1]) * unit;
}

async function cmdPausedStates(ctx: Context, args: string[]): Promise<number> {
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
      throw new UsageError('--limit takes a whole number from 1');
    return withStorage(ctx, async (storage) => {
      const pauses = storage.pauses();
      if (values.all) {
        const records = await pauses.listRecent(limit);
        for (const r of records) {
          ctx.out.record(
            { type: 'pause', ...r },
            `${r.resumed ? '✓' : '…'} ${r.token}  [${r.conversationId}] p${r.priority} ${r.kind}: ${r.question}${r.resumed ? `  → ${r.resumedAnswer}` : ''}`,
          );
        }
        if (!records.length) ctx.out.note('no questions yet');
        return EXIT.ok;
      }
      const pending = await pauses.listPendingAll(limit);
      for (const p of pending) {
        const options = Array.isArray(p.options)
          ? `  options: ${(p.options as string[]).map((o, i) => `${i + 1}) ${o}`).join(' ')}`
          : '';
        const from = p.proxiedFromChildId ? ` via ${p.proxiedFromChildId}` : '';
        ctx.out.record(
          { type: 'pause', ...p },
          `${p.token}  [${p.conversationId}${from}] p${p.priority} ${p.kind}: ${p.question}${options}`,
        );
      }
      if (!pending.length) ctx.out.note('no pending questions');
      return EXIT.ok;
    });
  }
  if (sub === 'purge') {
    if (values['older-than'] === undefined)
      throw new UsageError('purge needs --older-than AGE, e.g. 7d');
    const cutoff = new Date(Date.now() - parseAge(values['older-than']));
    return withStorage(ctx, async (storage) => {
      const deleted = await storage.pauses().cleanupResumedOlderThan(cutoff);
      ctx.out.record(
        { type: 'purged', deleted, cutoff: cutoff.toISOString() },
        `deleted ${deleted} answered question(s) older than ${cutoff.toISOString()}`,
      );
      return EXIT.ok;
    });
  }
  throw new UsageError('paused-states takes list or purge');
}

async function cmdMigrate(ctx: Context, args: string[]): Promise<number> {
  parseArgs({ args, options: globalOptions });
  return withStorage(ctx, async (storage) => {
    await migrateAll(storage.db);
    ctx.out.record(
      { type: 'migrated', where: storage.where },
      `migrations applied in ${storage.where}`,
    );
    return EXIT.ok;
  });
}

async function cmdDemo(ctx: Context, args: string[]): Promise<number> {
  parseArgs({ args, options: globalOptions });
  const { runDemo } = await import('./demo.js');
  return runDemo(ctx.out, path.join(ctx.dataDir, 'demo'));
}

const commands: Record<string, (ctx: Context, args: string[]) => Promise<number>> = {
  demo: cmdDemo,
  chat: (ctx, args) => runChat(ctx, args),
  exec: cmdExec,
  answer: cmdAnswer,
  wake: cmdWake,
  stop: cmdStop,
  serve: cmdServe,
  'paused-states': cmdPausedStates,
  migrate: cmdMigrate,
};

function exitCodeOf(error: unknown): number {
  const flags = error as { usage?: boolean; notFound?: boolean };
  if (error instanceof UsageError || flags?.usage || AskUserError.hasCode(error, 'invalid_answer'))
    return EXIT.usage;
  if (flags?.notFound) return EXIT.notFound;
  if ((error as { code?: string })?.code?.startsWith?.('ERR_PARSE_ARGS')) return EXIT.usage;
  if (AskUserError.hasCode(error, 'not_found')) return EXIT.notFound;
  if (
    ContinuationError.is(error) &&
    (error.code === 'not_found' || error.code === 'already_resolved')
  )
    return EXIT.notFound;
  if (error instanceof DataFolderLockedError) return EXIT.unavailable;
  const code =
    (error as { code?: string; cause?: { code?: string } })?.code ??
    (error as { cause?: { code?: string } })?.cause?.code;
  if (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'CONNECT_TIMEOUT' ||
    code === 'unavailable'
  )
    return EXIT.unavailable;
  return EXIT.failed;
}

/** Runs the CLI with `argv` (without node and the script); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const json = args.includes('--json');
  const out = createOutput({ json });
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(HELP.main);
    return command ? EXIT.ok : EXIT.usage;
  }
  const run = commands[command];
  if (!run) {
    out.error(`unknown command "${command}"; see runner --help`);
    return EXIT.usage;
  }
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP[command] ?? HELP.main);
    return EXIT.ok;
  }
  const dataFlag = args.indexOf('--data');
  const modelFlag = args.indexOf('--model');
  const dataDir =
    (dataFlag >= 0 ? args[dataFlag + 1] : undefined) ?? process.env.RUNNER_DATA ?? '.runner';
  const modelId =
    (modelFlag >= 0 ? args[modelFlag + 1] : undefined) ??
    process.env.RUNNER_MODEL ??
    'scripted:trip';
  const ctx: Context = {
    out,
    dataDir,
    modelId,
    command,
    open: () =>
      openStorage({
        dataDir,
        databaseUrl: process.env.DATABASE_URL || undefined,
        command,
        log: (line) => out.note(line),
      }),
  };
  try {
    return await run(ctx, args);
  } catch (error) {
    const code = exitCodeOf(error);
    const message = error instanceof Error ? error.message : String(error);
    out.error(code === EXIT.usage ? `${message}\n(see runner ${command} --help)` : message);
    if (code === EXIT.failed && process.env.RUNNER_DEBUG) console.error(error);
    return code;
  }
}

export type { Context };

const exitCode = await main(process.argv.slice(2));
process.exitCode = exitCode;
// A finished command must end even if a driver keeps a handle open after close (postgres.js
// can, after the server restarted under it); the timer does not itself keep the process up.
setTimeout(() => process.exit(exitCode), 1_000).unref();

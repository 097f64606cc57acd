// Kept byte-identical in @x/continuation and @x/session (check:imports compares them): the
// two conformance suites register, run and fork their cases the same way.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, it } from 'vitest';

/** One promise of a contract, checked by `run`; `skip` says why it does not apply. */
export interface SuiteCase<C> {
  group: string;
  name: string;
  skip?: string;
  timeout?: number;
  run: (context: C) => Promise<void>;
}

/** How a suite makes the store of one case and its peer. */
export interface SuiteStores<S, P> {
  create: () => S | Promise<S>;
  peer: (store: S) => P | Promise<P>;
  destroy?: (store: S) => void | Promise<void>;
}

/** Registers `cases` under `title`, one `describe` per group, each case on a fresh store. */
export function registerCases<S, P>(
  title: string,
  stores: SuiteStores<S, P>,
  cases: SuiteCase<{ store: S; peer: P }>[],
): void {
  describe(title, () => {
    const context = {} as { store: S; peer: P };
    beforeEach(async () => {
      context.store = await stores.create();
      context.peer = await stores.peer(context.store);
    });
    afterEach(async () => {
      await stores.destroy?.(context.store);
    });
    const groups = new Map<string, SuiteCase<{ store: S; peer: P }>[]>();
    for (const c of cases) groups.set(c.group, [...(groups.get(c.group) ?? []), c]);
    for (const [group, members] of groups) {
      describe(group, () => {
        for (const c of members) {
          const name = c.skip === undefined ? c.name : `${c.name} (skipped: ${c.skip})`;
          it.skipIf(c.skip !== undefined)(name, { timeout: c.timeout }, () => c.run(context));
        }
      });
    }
  });
}

/**
 * Runs the case whose name starts with `name` on a fresh store; resolves to its failure
 * message, or to `'the case passed'`. For the suites' own tests against broken adapters.
 */
export async function failureOf<S, P>(
  stores: SuiteStores<S, P>,
  cases: SuiteCase<{ store: S; peer: P }>[],
  name: string,
): Promise<string> {
  const found = cases.find((c) => c.name.startsWith(name));
  if (found === undefined) throw new Error(`no case named "${name}"`);
  const store = await stores.create();
  const peer = await stores.peer(store);
  try {
    await found.run({ store, peer });
  } catch (error) {
    return (error as Error).message;
  } finally {
    await stores.destroy?.(store);
  }
  return 'the case passed';
}

/** An error as a failure message shows it. */
export function shown(error: unknown): string {
  if (error === undefined) return 'no error at all';
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** A forked child of a process case, answering each message it is sent with one message. */
export interface SuiteChild {
  readonly process: ChildProcess;
  /** The next message the child sends (messages are queued in order). */
  next<T>(): Promise<T>;
  send(message: unknown): void;
  /** SIGKILLs the child and waits until it is gone. */
  kill(): Promise<void>;
}

/** What a child sends when it cannot start: the author's module failed to build a store. */
interface Fatal {
  type: 'fatal';
  message: string;
}

const live = new Set<SuiteChild>();

/** The module as a `file:` URL, from an absolute path or a URL. */
export function moduleHref(module: string | URL): string {
  if (module instanceof URL) return module.href;
  if (module.startsWith('file:')) return module;
  if (!/^([/\\]|[A-Za-z]:[/\\])/.test(module)) {
    throw new Error(`processes.module must be an absolute path or a file URL, got "${module}"`);
  }
  return pathToFileURL(module).href;
}

/**
 * Forks `script` (next to this file) with `args`. A child that exits before answering,
 * or reports that it could not start, rejects the pending `next()` with what it said.
 */
export function forkChild(script: URL, args: string[]): SuiteChild {
  const proc = fork(fileURLToPath(script), args, {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const queued: unknown[] = [];
  const waiting: Array<{ resolve: (m: unknown) => void; reject: (e: Error) => void }> = [];
  let ended: Error | undefined;
  proc.on('message', (message) => {
    if ((message as Fatal | null)?.type === 'fatal') {
      ended = new Error(`a child process could not start: ${(message as Fatal).message}`);
    } else {
      const waiter = waiting.shift();
      if (waiter) waiter.resolve(message);
      else queued.push(message);
    }
  });
  const exited = new Promise<void>((resolve) => {
    proc.once('exit', (code, signal) => {
      ended ??= new Error(`a child process exited (${signal ?? code}) before answering`);
      for (const waiter of waiting.splice(0)) waiter.reject(ended);
      live.delete(child);
      resolve();
    });
  });
  const child: SuiteChild = {
    process: proc,
    next<T>() {
      if (queued.length > 0) return Promise.resolve(queued.shift() as T);
      if (ended !== undefined) return Promise.reject(ended);
      return new Promise<T>((resolve, reject) => {
        waiting.push({ resolve: resolve as (m: unknown) => void, reject });
      });
    },
    send(message) {
      proc.send(message as Parameters<ChildProcess['send']>[0]);
    },
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
  live.add(child);
  return child;
}

/** Kills every child still running, so a failed or timed-out case leaves none behind. */
export async function killChildren(): Promise<void> {
  await Promise.all([...live].map((child) => child.kill()));
}

/**
 * Runs `count` lanes side by side. Once one fails the others are told to stop (`stopped()`
 * turns true; a lane checks it before each kill), every child is killed, and the first
 * failure is thrown only when all lanes have ended: no lane forks a child after the case.
 */
export async function runLanes<T>(
  count: number,
  lane: (index: number, stopped: () => boolean) => Promise<T>,
): Promise<T[]> {
  let failed = false;
  const results = await Promise.allSettled(
    Array.from({ length: count }, (_, i) =>
      lane(i, () => failed).catch((error: unknown) => {
        failed = true;
        throw error;
      }),
    ),
  );
  await killChildren();
  const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected !== undefined) throw rejected.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** Resolves after a random pause of up to `ms` milliseconds. */
export function jitter(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ms));
}

// Kept byte-identical in @x/continuation and @x/session (check:imports compares them): the
// two conformance suites register, run and fork their cases the same way.
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
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

/** What one option of a suite must be: `valid` checks it, `accepts` says it in the error. */
export interface OptionRule {
  accepts: string;
  valid: (value: unknown) => boolean;
}

/** An option rule's check: a function. */
export const isFunction = (value: unknown): boolean => typeof value === 'function';
/** An option rule's check: absent, or passing `valid`. */
export const optional =
  (valid: (value: unknown) => boolean) =>
  (value: unknown): boolean =>
    value === undefined || valid(value);
/** An option rule's check: an integer of at least `least`. */
export const atLeast =
  (least: number) =>
  (value: unknown): boolean =>
    Number.isInteger(value) && (value as number) >= least;

/** A module given as `processes.module` that the children can import. */
function isChildModule(value: unknown): boolean {
  if (typeof value !== 'string' && !(value instanceof URL)) return false;
  try {
    const href = moduleHref(value);
    return !href.startsWith('file:') || existsSync(fileURLToPath(href));
  } catch {
    return false;
  }
}

/**
 * The options both suites share (`processes.*` apply when `processes` is not null), checked
 * before any case registers: a missing one fails where the suite is called, not in a case.
 */
export const SUITE_OPTION_RULES: Record<string, OptionRule> = {
  name: {
    accepts: 'a non-empty string, shown in the test names',
    valid: (value) => typeof value === 'string' && value !== '',
  },
  create: { accepts: 'a function that returns a store for one test', valid: isFunction },
  destroy: {
    accepts: 'a function that releases what create made, or nothing',
    valid: optional(isFunction),
  },
  peer: {
    accepts:
      'a function that returns a second instance over the same data as the store it is given (the store itself only when there can be no second instance, as in memory)',
    valid: isFunction,
  },
  failing: {
    accepts:
      'a function that returns a store of your adapter whose backend fails on every call, or null when there is no backend that can fail (as in memory)',
    valid: (value) => value === null || isFunction(value),
  },
  processes: {
    accepts:
      '{ module, args } to run the cross-process cases, or null when the store cannot be shared by processes (as in memory)',
    valid: (value) => value === null || (typeof value === 'object' && !Array.isArray(value)),
  },
  'processes.module': {
    accepts:
      'the absolute path or file: URL of an existing ES module that plain node can run, whose default export builds a store',
    valid: isChildModule,
  },
  'processes.args': {
    accepts: 'a function that returns the JSON value each child hands to the module',
    valid: isFunction,
  },
  'processes.racers': {
    accepts: 'an integer of at least 2 (a race needs two)',
    valid: optional(atLeast(2)),
  },
  'processes.rounds': { accepts: 'an integer of at least 1', valid: optional(atLeast(1)) },
  'processes.kills': { accepts: 'an integer of at least 0', valid: optional(atLeast(0)) },
};

/** A value as an option error shows it. */
function described(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof URL) return `the URL ${value.href}`;
  if (typeof value === 'object' && value !== null) return 'an object';
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * Throws a TypeError naming the first option of `options` that breaks its rule, so a
 * missing `failing` or `peer` fails the test file where the suite is registered instead of
 * passing a case silently or failing one with a TypeError. `suite` starts the message.
 */
export function checkOptions(
  suite: string,
  options: unknown,
  rules: Record<string, OptionRule>,
): void {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${suite}: expected an options object, got ${described(options)}`);
  }
  for (const [name, rule] of Object.entries(rules)) {
    const [head, field] = name.split('.') as [string, string | undefined];
    const parent = field === undefined ? options : (options as Record<string, unknown>)[head];
    if (typeof parent !== 'object' || parent === null) continue;
    const value = (parent as Record<string, unknown>)[field ?? head];
    if (rule.valid(value)) continue;
    const what = value === undefined ? 'is missing' : `is ${described(value)}`;
    throw new TypeError(`${suite}: option "${name}" ${what}: give ${rule.accepts}`);
  }
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

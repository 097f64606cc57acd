import { Bench } from 'tinybench';

/** Latency statistics of one measured task, in milliseconds. */
export interface Stats {
  median: number;
  p99: number;
  /** Median absolute deviation over the median: how much runs disagree (0.05 = 5 %). */
  spread: number;
  samples: number;
}

/** How long and how often each task runs; `quick` shrinks it for a smoke run. */
export interface Budget {
  /** Time per task per round, in ms (tinybench keeps going until time AND iterations are met). */
  time: number;
  /** Minimum iterations per task per round. */
  iterations: number;
  /** Rounds; floor and subject alternate their order between rounds to cancel drift. */
  rounds: number;
}

/** A task body; may return tinybench's `{ overriddenDuration }` to time only part of itself. */
export type Task = () => unknown;

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (at - lo);
}

/** Median, p99 and relative MAD of latency samples (ms). */
export function statsOf(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = quantile(sorted, 0.5);
  const deviations = sorted.map((s) => Math.abs(s - median)).sort((a, b) => a - b);
  return {
    median,
    p99: quantile(sorted, 0.99),
    spread: median > 0 ? quantile(deviations, 0.5) / median : 0,
    samples: sorted.length,
  };
}

/**
 * Runs every task with tinybench (warm-up in the first round) for `budget.rounds` rounds,
 * reversing the task order each round, and pools each task's samples. Interleaving matters
 * on a shared machine: a floor measured a minute before its subject sees a different load.
 */
export async function measure(
  tasks: Readonly<Record<string, Task>>,
  budget: Budget,
): Promise<Record<string, Stats>> {
  const pooled = new Map<string, number[]>(Object.keys(tasks).map((name) => [name, []]));
  for (let round = 0; round < budget.rounds; round++) {
    const bench = new Bench({
      time: budget.time,
      iterations: budget.iterations,
      warmup: round === 0,
      warmupIterations: Math.max(2, Math.ceil(budget.iterations / 4)),
      warmupTime: Math.min(250, budget.time / 4),
      retainSamples: true,
      throws: true,
    });
    const names = Object.keys(tasks);
    if (round % 2 === 1) names.reverse();
    for (const name of names) bench.add(name, tasks[name] as Task);
    await bench.run();
    for (const task of bench.tasks) {
      const result = task.result;
      if (result.state === 'errored') throw result.error;
      if (result.state !== 'completed') throw new Error(`task ${task.name} did not complete`);
      pooled.get(task.name)?.push(...(result.latency.samples ?? []));
    }
  }
  return Object.fromEntries([...pooled].map(([name, samples]) => [name, statsOf(samples)]));
}

/** Times `fn` alone and tells tinybench to use that time (for tasks with untimed set-up). */
export async function timed(fn: () => Promise<unknown>): Promise<{ overriddenDuration: number }> {
  const start = performance.now();
  await fn();
  return { overriddenDuration: performance.now() - start };
}

/** What {@link interleaved} measured: each side's pooled samples, and each round's ratio. */
export interface Interleaved {
  subject: Stats;
  floor: Stats;
  /** Each round's subject median over its floor median. */
  roundRatios: number[];
}

/**
 * Times `subject` and `floor` one right after the other, `pairs` times per round for `rounds`
 * rounds, the first of each pair alternating (so neither always runs on the other's heels),
 * after `warmup` untimed pairs. For a small difference on a shared machine: both sides see
 * the same load at the same moment, which separate tinybench tasks a second apart do not.
 */
export async function interleaved(
  subject: () => Promise<unknown>,
  floor: () => Promise<unknown>,
  { rounds, pairs, warmup }: { rounds: number; pairs: number; warmup: number },
): Promise<Interleaved> {
  for (let k = 0; k < warmup; k++) {
    await subject();
    await floor();
  }
  const time = async (fn: () => Promise<unknown>, into: number[]) => {
    const start = performance.now();
    await fn();
    into.push(performance.now() - start);
  };
  const all = { subject: [] as number[], floor: [] as number[] };
  const roundRatios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const mine = { subject: [] as number[], floor: [] as number[] };
    for (let k = 0; k < pairs; k++) {
      if ((round + k) % 2 === 0) {
        await time(subject, mine.subject);
        await time(floor, mine.floor);
      } else {
        await time(floor, mine.floor);
        await time(subject, mine.subject);
      }
    }
    roundRatios.push(statsOf(mine.subject).median / statsOf(mine.floor).median);
    all.subject.push(...mine.subject);
    all.floor.push(...mine.floor);
  }
  return { subject: statsOf(all.subject), floor: statsOf(all.floor), roundRatios };
}

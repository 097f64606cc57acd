/**
 * At most this many deltas follow a whole value of a channel: a read reassembles the value
 * from its last whole value and the deltas after it, so the chain stays short.
 */
export const MAX_DELTAS = 32;

/** How many channels the saver remembers, the least recently used forgotten first. */
const CAPACITY = 256;

/** A channel's value as the saver last stored or read it. */
interface Base {
  version: string;
  /** The array itself: the items of a new value are compared with it by identity. */
  value: readonly unknown[];
  /** Its length then (a reducer may push into the same array later). */
  length: number;
  /** How many deltas its stored form has after its last whole value. */
  depth: number;
}

/** What to store of a new array value: the items appended to `base`'s value. */
export interface Delta {
  base: string;
  items: unknown[];
  depth: number;
}

/**
 * The channel values a saver last stored or read, per thread, namespace and channel: the
 * bases of the next deltas. A new array value whose first items are the very objects of the
 * base's (a reducer such as `[...a, ...b]` keeps them) is stored as the items after them. It
 * relies on what the saver relies on already: a thread's namespace has one value per channel
 * and version, whoever wrote it.
 */
export class DeltaBases {
  readonly #bases = new Map<string, Base>();

  /** The delta of `value` against the channel's base, or undefined when it is not an append. */
  deltaOf(thread: string, ns: string, channel: string, value: unknown): Delta | undefined {
    const key = keyOf(thread, ns, channel);
    const base = this.#bases.get(key);
    if (base === undefined || !Array.isArray(value) || value === base.value) return undefined;
    if (value.length < base.length || base.depth >= MAX_DELTAS) return undefined;
    for (let i = 0; i < base.length; i++) if (value[i] !== base.value[i]) return undefined;
    return { base: base.version, items: value.slice(base.length), depth: base.depth + 1 };
  }

  /** Records `value` as the channel's value at `version` (forgotten when not an array). */
  remember(
    thread: string,
    ns: string,
    channel: string,
    version: string,
    value: unknown,
    depth: number,
  ): void {
    const key = keyOf(thread, ns, channel);
    this.#bases.delete(key);
    if (!Array.isArray(value)) return;
    this.#bases.set(key, { version, value, length: value.length, depth });
    if (this.#bases.size > CAPACITY) {
      const oldest = this.#bases.keys().next().value;
      if (oldest !== undefined) this.#bases.delete(oldest);
    }
  }

  /** Forgets one channel, or every channel of `thread` when `channel` is not given. */
  forget(thread: string, ns?: string, channel?: string): void {
    if (ns !== undefined && channel !== undefined) {
      this.#bases.delete(keyOf(thread, ns, channel));
      return;
    }
    const prefix = `[${JSON.stringify(thread)},`;
    for (const key of [...this.#bases.keys()]) if (key.startsWith(prefix)) this.#bases.delete(key);
  }
}

function keyOf(thread: string, ns: string, channel: string): string {
  return JSON.stringify([thread, ns, channel]);
}

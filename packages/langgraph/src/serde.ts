import { JsonPlusSerializer, type SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { isJsonValue } from '@x/wire';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * LangGraph's `JsonPlusSerializer` with a shortcut for plain JSON (a transcript of plain
 * messages, most metadata): `JSON.stringify` writes it, the same bytes `JsonPlusSerializer`
 * writes, in a tenth of its time on a long transcript (LangGraph waits for every `put`), and
 * JSON without a LangChain record (`lc`) is read by `JSON.parse` alone. Anything else (class
 * instances, `undefined`, `Map`, bytes, cycles) goes through `JsonPlusSerializer`.
 */
export class CheckpointSerializer implements SerializerProtocol {
  readonly #plus = new JsonPlusSerializer();

  dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    if (isJsonValue(value)) return Promise.resolve(['json', encoder.encode(JSON.stringify(value))]);
    return this.#plus.dumpsTyped(value);
  }

  loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    if (type !== 'json') return this.#plus.loadsTyped(type, data);
    const text = typeof data === 'string' ? data : decoder.decode(data);
    const value: unknown = JSON.parse(text);
    return hasRecord(value) ? this.#plus.loadsTyped(type, text) : Promise.resolve(value);
  }
}

/** Whether parsed JSON has an object with an `lc` key: only those does `JsonPlusSerializer` revive. */
function hasRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (hasRecord(item)) return true;
    return false;
  }
  if (Object.hasOwn(value, 'lc')) return true;
  for (const key in value) if (hasRecord((value as Record<string, unknown>)[key])) return true;
  return false;
}

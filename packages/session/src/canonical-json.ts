import type { JsonValue } from '@x/wire';

/**
 * (Internal.) A deep copy of a JSON value with the keys of every object, at every depth, in
 * one order that depends on the value alone, so equal values serialise to equal bytes
 * however they were built. The order is code-unit order (`Array.prototype.sort`), except that
 * JavaScript always lists integer-like keys (`"2"`, `"10"`) first, in numeric order.
 * `value` must be a JSON value (see `isJsonValue`), so its depth is bounded.
 */
export function canonicalJson<T extends JsonValue>(value: T): T {
  return canonical(value) as T;
}

function canonical(value: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(canonical);
  // Object.fromEntries defines own properties, so a key like "__proto__" stays plain data.
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical(value[key] as JsonValue)]),
  );
}

/** (Internal.) A copy of a record with its keys sorted; values copied by `copy`. */
export function sortedRecord<V>(
  record: Readonly<Record<string, V>>,
  copy: (value: V) => V,
): Record<string, V> {
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, copy(record[key] as V)]),
  );
}

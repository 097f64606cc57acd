/** A JSON schema as the gated tools' zod schemas produce it (`z.toJSONSchema`). */
interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: Schema;
}

const kindOf = (value: unknown) =>
  Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;

/**
 * What is wrong with `value` under `schema`, one line each (empty: it fits). It checks the
 * keywords the gated tools' schemas use, so that an edit is refused before it is sent; the
 * server checks again with the tool's zod schema.
 */
export function schemaErrors(schema: Schema, value: unknown, at = 'arguments'): string[] {
  const kind = kindOf(value);
  const wanted = schema.type === 'integer' ? 'number' : schema.type;
  if (wanted && kind !== wanted) return [`${at}: expected ${schema.type}, got ${kind}`];
  if (schema.type === 'integer' && !Number.isInteger(value)) return [`${at}: expected an integer`];
  if (schema.enum && !schema.enum.includes(value)) {
    return [`${at}: expected one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`];
  }
  if (typeof value === 'string') return stringErrors(schema, value, at);
  if (typeof value === 'number') return numberErrors(schema, value, at);
  if (Array.isArray(value))
    return value.flatMap((v, i) =>
      schema.items ? schemaErrors(schema.items, v, `${at}[${i}]`) : [],
    );
  if (kind !== 'object') return [];
  const object = value as Record<string, unknown>;
  const properties = schema.properties ?? {};
  return [
    ...(schema.required ?? [])
      .filter((name) => !(name in object))
      .map((name) => `${at}.${name}: required`),
    ...Object.entries(object).flatMap(([name, v]) => {
      const property = properties[name];
      if (property) return schemaErrors(property, v, `${at}.${name}`);
      return schema.additionalProperties === false
        ? [`${at}.${name}: not an argument of this tool`]
        : [];
    }),
  ];
}

function stringErrors(schema: Schema, value: string, at: string): string[] {
  const errors: string[] = [];
  if (schema.minLength !== undefined && value.length < schema.minLength) {
    errors.push(`${at}: at least ${schema.minLength} characters`);
  }
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    errors.push(`${at}: at most ${schema.maxLength} characters`);
  }
  if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) {
    errors.push(`${at}: not in the expected form`);
  }
  return errors;
}

function numberErrors(schema: Schema, value: number, at: string): string[] {
  const errors: string[] = [];
  if (schema.minimum !== undefined && value < schema.minimum)
    errors.push(`${at}: at least ${schema.minimum}`);
  if (schema.maximum !== undefined && value > schema.maximum)
    errors.push(`${at}: at most ${schema.maximum}`);
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) {
    errors.push(`${at}: more than ${schema.exclusiveMinimum}`);
  }
  if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) {
    errors.push(`${at}: less than ${schema.exclusiveMaximum}`);
  }
  return errors;
}

import { PolicyError } from './errors.js';

/** A Cedar type in the schema's JSON form. */
export type CedarType =
  | { type: 'String' }
  | { type: 'Long' }
  | { type: 'Boolean' }
  | { type: 'Extension'; name: 'decimal' | 'datetime' }
  | { type: 'Set'; element: CedarType }
  | { type: 'Record'; attributes: Record<string, CedarType & { required?: boolean }> };

/** A value as Cedar's JSON takes it. */
export type CedarValue =
  | string
  | number
  | boolean
  | CedarValue[]
  | { __extn: { fn: string; arg: string } }
  | { [key: string]: CedarValue };

/** Why a call's arguments do not match its tool's schema: where, and what was expected. */
export class ArgumentMismatch {
  constructor(
    readonly path: string,
    readonly expected: string,
  ) {}

  /** The sentence returned to the model. */
  get message(): string {
    return `${this.path}: ${this.expected}`;
  }
}

/** One tool's input schema compiled: its Cedar type, and the check that converts a value to it. */
export interface Shape {
  cedar: CedarType;
  /** Whether `null` stands for absent (the type lists `"null"`). */
  nullable: boolean;
  /** The value as Cedar takes it, or the first mismatch. */
  convert(value: unknown, path: string): CedarValue | ArgumentMismatch;
}

// Keywords that change which values are valid in ways a Cedar type cannot follow.
const UNSUPPORTED = [
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  '$ref',
  'if',
  'then',
  'else',
  'patternProperties',
  'prefixItems',
  'dependentSchemas',
  'dependentRequired',
  'propertyNames',
  'unevaluatedProperties',
  'contains',
];

// Cedar's decimal holds four decimal places in a signed 64-bit integer.
const DECIMAL_LIMIT = 922_337_203_685_477;

/**
 * Compiles a tool's JSON schema (the subset policies can read: string, integer, number,
 * boolean, array, object, a type with `null`, `enum`, `const`, bounds, `pattern`) into a
 * Cedar type and a converter; anything else is refused with the tool and the path.
 */
export function compileShape(tool: string, schema: unknown, path = 'input'): Shape {
  const refuse = (why: string): never => {
    throw new PolicyError('unsupported_schema', `tool "${tool}", ${path}: ${why}`);
  };
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return refuse('the schema is not an object');
  }
  const s = schema as Record<string, unknown>;
  const used = UNSUPPORTED.find((keyword) => keyword in s);
  if (used) return refuse(`"${used}" has no Cedar type; describe the input without it`);
  const declared = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
  const types = declared.filter((t) => t !== 'null');
  const nullable = types.length < declared.length;
  const type = types.length === 1 ? types[0] : s.properties !== undefined ? 'object' : undefined;
  if (types.length > 1 || typeof type !== 'string') {
    return refuse('give exactly one type (with or without "null")');
  }
  const shape = baseShape(tool, type, s, path, refuse);
  const allowed = Array.isArray(s.enum) ? s.enum : 'const' in s ? [s.const] : undefined;
  if (!allowed) return { ...shape, nullable };
  return {
    cedar: shape.cedar,
    nullable,
    convert(value, at) {
      if (allowed && !allowed.some((one) => one === value)) {
        return new ArgumentMismatch(at, `expected one of ${JSON.stringify(allowed)}`);
      }
      return shape.convert(value, at);
    },
  };
}

function baseShape(
  tool: string,
  type: string,
  s: Record<string, unknown>,
  path: string,
  refuse: (why: string) => never,
): Shape {
  switch (type) {
    case 'string':
      return stringShape(s);
    case 'integer':
    case 'number':
      return numberShape(type, s);
    case 'boolean':
      return {
        cedar: { type: 'Boolean' },
        nullable: false,
        convert: (v, at) =>
          typeof v === 'boolean'
            ? v
            : new ArgumentMismatch(at, `expected a boolean, got ${shown(v)}`),
      };
    case 'array':
      return arrayShape(tool, s, path);
    case 'object':
      return objectShape(tool, s, path, refuse);
    default:
      return refuse(`type "${type}" has no Cedar type`);
  }
}

function stringShape(s: Record<string, unknown>): Shape {
  const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Number.POSITIVE_INFINITY;
  return {
    cedar: { type: 'String' },
    nullable: false,
    convert(v, at) {
      if (typeof v !== 'string')
        return new ArgumentMismatch(at, `expected a string, got ${shown(v)}`);
      const length = [...v].length;
      if (length < min || length > max) {
        return new ArgumentMismatch(at, `expected ${min} to ${max} characters, got ${length}`);
      }
      if (pattern && !pattern.test(v)) {
        return new ArgumentMismatch(at, `expected a string matching /${pattern.source}/`);
      }
      return v;
    },
  };
}

function numberShape(type: 'integer' | 'number', s: Record<string, unknown>): Shape {
  const min = typeof s.minimum === 'number' ? s.minimum : Number.NEGATIVE_INFINITY;
  const max = typeof s.maximum === 'number' ? s.maximum : Number.POSITIVE_INFINITY;
  return {
    cedar: type === 'integer' ? { type: 'Long' } : { type: 'Extension', name: 'decimal' },
    nullable: false,
    convert(v, at) {
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        return new ArgumentMismatch(
          at,
          `expected ${type === 'integer' ? 'an integer' : 'a number'}, got ${shown(v)}`,
        );
      }
      if (v < min || v > max)
        return new ArgumentMismatch(at, `expected ${min} to ${max}, got ${v}`);
      if (type === 'integer') {
        return Number.isSafeInteger(v)
          ? v
          : new ArgumentMismatch(at, `expected an integer, got ${v}`);
      }
      return decimalValue(v, at);
    },
  };
}

/** A number as Cedar's `decimal`, or why it cannot be one (past four places, out of range). */
export function decimalValue(v: number, at: string): CedarValue | ArgumentMismatch {
  const text = v.toFixed(4);
  if (Math.abs(v) >= DECIMAL_LIMIT || Number(text) !== v) {
    return new ArgumentMismatch(
      at,
      `${v} is not a decimal policies can compare (at most 4 places)`,
    );
  }
  return { __extn: { fn: 'decimal', arg: text } };
}

function arrayShape(tool: string, s: Record<string, unknown>, path: string): Shape {
  const items = compileShape(tool, s.items, `${path}[]`);
  const min = typeof s.minItems === 'number' ? s.minItems : 0;
  const max = typeof s.maxItems === 'number' ? s.maxItems : Number.POSITIVE_INFINITY;
  return {
    cedar: { type: 'Set', element: items.cedar },
    nullable: false,
    convert(v, at) {
      if (!Array.isArray(v)) return new ArgumentMismatch(at, `expected an array, got ${shown(v)}`);
      if (v.length < min || v.length > max) {
        return new ArgumentMismatch(at, `expected ${min} to ${max} items, got ${v.length}`);
      }
      const out: CedarValue[] = [];
      for (const [i, item] of v.entries()) {
        const converted = items.convert(item, `${at}[${i}]`);
        if (converted instanceof ArgumentMismatch) return converted;
        out.push(converted);
      }
      return out;
    },
  };
}

function objectShape(
  tool: string,
  s: Record<string, unknown>,
  path: string,
  refuse: (why: string) => never,
): Shape {
  const properties = (s.properties ?? {}) as Record<string, unknown>;
  if (typeof properties !== 'object' || Array.isArray(properties)) {
    return refuse('"properties" is not an object');
  }
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const closed = s.additionalProperties === false;
  const fields = Object.entries(properties).map(([name, sub]) => {
    const shape = compileShape(tool, sub, `${path}.${name}`);
    return { name, shape, present: required.has(name) && !shape.nullable };
  });
  const attributes: Record<string, CedarType & { required?: boolean }> = {};
  for (const { name, shape, present } of fields)
    attributes[name] = { ...shape.cedar, required: present };
  return {
    cedar: { type: 'Record', attributes },
    nullable: false,
    convert(v, at) {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        return new ArgumentMismatch(at, `expected an object, got ${shown(v)}`);
      }
      const given = v as Record<string, unknown>;
      const out: Record<string, CedarValue> = {};
      for (const { name, shape } of fields) {
        const value = given[name];
        if (value === undefined) {
          if (required.has(name)) return new ArgumentMismatch(`${at}.${name}`, 'is required');
          continue;
        }
        if (value === null && shape.nullable) continue;
        const converted = shape.convert(value, `${at}.${name}`);
        if (converted instanceof ArgumentMismatch) return converted;
        out[name] = converted;
      }
      if (closed) {
        const extra = Object.keys(given).find((key) => !(key in properties));
        if (extra !== undefined) {
          return new ArgumentMismatch(
            `${at}.${JSON.stringify(extra)}`,
            'is not a property of the tool',
          );
        }
      }
      return out;
    },
  };
}

// Control characters are escaped wherever a value is shown, and a long one is cut.
function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

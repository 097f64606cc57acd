import { createHash } from 'node:crypto';
import type { ActionConstraint, DetailedError, SchemaJson } from '@cedar-policy/cedar-wasm/nodejs';
import { z } from 'zod';
import { cedar } from './cedar.js';
import { PolicyError, type PolicySourceLocation } from './errors.js';
import { type Rule, ruleOf } from './rule.js';
import { compileShortForm, type ShortForm } from './short-form.js';
import { type CompiledTools, compileTools, type ToolDefinition } from './tool-schema-set.js';

/** One Cedar file of the set: its name (shown in errors and rule ids) and its text. */
export interface PolicySource {
  name: string;
  text: string;
}

/** Options of {@link loadPolicySet}. */
export interface LoadPolicySetOptions {
  /** The tools decided on; the Cedar schema the files are validated against is generated from them. */
  tools: readonly ToolDefinition[];
  /** The Cedar files (see {@link readPolicySources}); default none. */
  sources?: readonly PolicySource[];
  /** The six variables' short form, compiled into rules of the same set (a source named `short-form`). */
  shortForm?: ShortForm;
  /** The role asked when deciding fails; default `admin`. */
  adminRole?: string;
  /** What a call no rule matches gets: `ask` any operator (default, as before policies) or `deny`. */
  unmatched?: 'ask' | 'deny';
}

const optionsSchema = z.object({
  sources: z
    .array(z.object({ name: z.string().min(1).max(500), text: z.string().max(5_000_000) }))
    .max(10_000)
    .default([]),
  adminRole: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/)
    .default('admin'),
  unmatched: z.enum(['ask', 'deny']).default('ask'),
});

/** A loaded set, everything {@link PolicySet} decides with. */
export interface LoadedSet {
  tools: CompiledTools;
  rules: ReadonlyMap<string, Rule>;
  hash: string;
  schemaText: string;
  adminRole: string;
  unmatched: 'ask' | 'deny';
}

/** Loads, checks and pre-parses a set; refuses it whole at the first problem. */
export function loadSet(options: LoadPolicySetOptions): LoadedSet {
  const parsed = optionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    throw new PolicyError('invalid_argument', `options: ${z.prettifyError(parsed.error)}`);
  }
  const tools = compileTools(options.tools);
  const sources = [...parsed.data.sources];
  if (options.shortForm)
    sources.push({ name: 'short-form', text: compileShortForm(options.shortForm) });
  const names = new Set<string>();
  for (const { name } of sources) {
    if (names.has(name))
      throw new PolicyError('invalid_argument', `sources: "${name}" is given twice`);
    names.add(name);
  }
  const schemaCheck = cedar().checkParseSchema(tools.schema as SchemaJson<string>);
  if (schemaCheck.type === 'failure') {
    throw new PolicyError(
      'unsupported_schema',
      `the tools' schema: ${messageOf(schemaCheck.errors)}`,
    );
  }
  const rules = new Map<string, Rule>();
  const texts: Record<string, string> = {};
  const offsets = new Map<string, { source: PolicySource; offset: number }>();
  const scopes = new Map<string, string[] | 'all'>();
  for (const source of sources) {
    for (const { text, offset, rule, actions } of parseSource(source)) {
      scopes.set(rule.id, actions);
      const clash = rules.get(rule.id);
      if (clash) {
        const at = clash.location;
        throw new PolicyError(
          'invalid_annotation',
          `${rule.location.file}:${rule.location.line}: @id: "${rule.id}" is also the id of the rule at ${at.file}:${at.line}`,
          { location: rule.location },
        );
      }
      rules.set(rule.id, rule);
      texts[rule.id] = text;
      offsets.set(rule.id, { source, offset });
    }
  }
  const hash = hashOf(options.tools, sources, parsed.data);
  if (rules.size > 0) {
    const checked = cedar().validate({
      schema: tools.schema as SchemaJson<string>,
      policies: { staticPolicies: texts },
    });
    if (checked.type === 'failure') {
      throw new PolicyError('invalid_policy', `the policies: ${messageOf(checked.errors)}`);
    }
    const first = checked.validationErrors[0];
    if (first) {
      const at = offsets.get(first.policyId);
      const start = first.error.sourceLocations?.[0]?.start ?? 0;
      const location = at
        ? locate(at.source, at.offset + start)
        : { file: '?', line: 0, column: 0 };
      const more = checked.validationErrors.length - 1;
      throw new PolicyError(
        'invalid_policy',
        `${location.file}:${location.line}:${location.column}: ${messageOf([first.error])}${more > 0 ? ` (and ${more} more)` : ''}`,
        { location },
      );
    }
  }
  // One pre-parsed set per tool, holding only the rules whose scope names it (or any action):
  // Cedar evaluates every rule of a set, and a rule scoped to another action never matches.
  for (const tool of tools.shapes.keys()) {
    const own = Object.entries(texts).filter(([id]) => {
      const scope = scopes.get(id);
      return scope === 'all' || scope?.includes(tool);
    });
    preparseOrThrow(
      cedar().preparsePolicySet(setIdOf(hash, tool), { staticPolicies: Object.fromEntries(own) }),
    );
  }
  const schemaText = cedarSchemaText(tools.schema);
  return {
    tools,
    rules,
    hash,
    schemaText,
    adminRole: parsed.data.adminRole,
    unmatched: parsed.data.unmatched,
  };
}

/** The id under which one tool's rules of a set are pre-parsed. */
export function setIdOf(hash: string, tool: string): string {
  return `${hash}/${tool}`;
}

/** The actions a rule's scope names, or `all` (no action constraint). */
function actionsOf(scope: ActionConstraint): string[] | 'all' {
  if (scope.op === 'All') return 'all';
  const uids = 'entities' in scope ? scope.entities : 'entity' in scope ? [scope.entity] : [];
  return uids.map((uid) => ('__entity' in uid ? uid.__entity.id : uid.id));
}

// A template (?principal) fails the first check: the set holds static policies only.
function parseSource(
  source: PolicySource,
): { text: string; offset: number; rule: Rule; actions: string[] | 'all' }[] {
  const syntax = cedar().checkParsePolicySet({ staticPolicies: source.text });
  if (syntax.type === 'failure') refuseAt(source, syntax.errors);
  const parts = cedar().policySetTextToParts(source.text);
  if (parts.type === 'failure') return refuseAt(source, parts.errors);
  let cursor = 0;
  return parts.policies.map((text) => {
    const found = source.text.indexOf(text, cursor);
    const offset = found < 0 ? cursor : found;
    cursor = offset + text.length;
    const json = cedar().policyToJson(text);
    if (json.type === 'failure') return refuseAt(source, json.errors, offset);
    const rule = ruleOf(json.json.effect, json.json.annotations ?? {}, locate(source, offset));
    return { text, offset, rule, actions: actionsOf(json.json.action) };
  });
}

function refuseAt(source: PolicySource, errors: DetailedError[], base = 0): never {
  const offset = base + (errors[0]?.sourceLocations?.[0]?.start ?? 0);
  throw new PolicyError('invalid_policy', `${where(source, offset)}: ${messageOf(errors)}`, {
    location: locate(source, offset),
  });
}

function where(source: PolicySource, offset: number): string {
  const { file, line, column } = locate(source, offset);
  return `${file}:${line}:${column}`;
}

/** The 1-based line and column of a character offset in a source. */
function locate(source: PolicySource, offset: number): PolicySourceLocation {
  const before = source.text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return { file: source.name, line, column };
}

/** Cedar's first message, its label and help. */
function messageOf(errors: readonly DetailedError[]): string {
  const first = errors[0];
  if (!first) return 'failed with no message';
  const label = first.sourceLocations?.[0]?.label;
  return [first.message, label ? `(${label})` : '', first.help ? `help: ${first.help}` : '']
    .filter((part) => part !== '')
    .join(' ');
}

function preparseOrThrow(
  answer: { type: 'success' } | { type: 'failure'; errors: DetailedError[] },
) {
  if (answer.type === 'failure') {
    throw new PolicyError('invalid_policy', `pre-parsing: ${messageOf(answer.errors)}`);
  }
}

// The generated schema in Cedar's own syntax, for policy authors to read.
function cedarSchemaText(schema: Record<string, unknown>): string {
  const text = cedar().schemaToText(schema as SchemaJson<string>);
  return text.type === 'success' ? text.text : '';
}

/** The hash of everything that decides: the tools' schemas, the sources, the options. */
function hashOf(
  tools: readonly ToolDefinition[],
  sources: readonly PolicySource[],
  options: { adminRole: string; unmatched: string },
): string {
  const canonical = stable({
    version: 1,
    tools: tools.map((tool) => ({ name: tool.name, inputSchema: tool.inputSchema })),
    sources: [...sources].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    adminRole: options.adminRole,
    unmatched: options.unmatched,
  });
  return `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

// Keys sorted at every level, so that the same set hashes the same whatever its key order.
function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

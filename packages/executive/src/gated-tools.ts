import type { ToolUseBlock } from '@x/wire';
import { z } from 'zod';

/**
 * Where a gated tool's effect lands, deduplicated by its idempotency key: the first call with
 * a key has the effect, a later one with the same key only counts the invocation. The demo's
 * tools write to the runner's `tool_effects` table; a real tool passes the key to its API.
 */
export interface EffectLog {
  apply(key: string, tool: string, input: unknown): Promise<{ invocations: number }>;
}

/** What a gated tool is given when it runs: the question's token as its idempotency key. */
export interface GatedContext {
  key: string;
  effects: EffectLog;
}

/** A tool that runs only once a person approved its call (the turn waits for them). */
export interface GatedTool<Input = unknown> {
  description: string;
  /** Its arguments' schema: the model's call and a person's edit are checked against it. */
  input: z.ZodType<Input>;
  /** Runs the approved call; its effect goes through `context.effects` under `context.key`. */
  run(input: Input, context: GatedContext): Promise<string>;
}

/** The gated tools a turn offers, by name. */
export type GatedTools = Readonly<Record<string, GatedTool>>;

/** True for a tool of `gated`, i.e. one declared as needing approval. */
export function isGatedTool(gated: GatedTools, name: string): boolean {
  return Object.hasOwn(gated, name);
}

/** The gated tool of that name; the caller checked it with {@link isGatedTool}. */
function gatedTool(gated: GatedTools, name: string): GatedTool {
  const tool = gated[name];
  if (tool === undefined) throw new Error(`"${name}" is not a gated tool`);
  return tool;
}

/** The JSON schema of a gated tool's arguments (what the page validates an edit against). */
export function gatedInputSchema(gated: GatedTools, name: string): Record<string, unknown> {
  return z.toJSONSchema(gatedTool(gated, name).input) as Record<string, unknown>;
}

/** A gated call's arguments checked against its tool's schema, or why they do not fit. */
export function gatedArguments(
  gated: GatedTools,
  name: string,
  input: unknown,
): { arguments: Record<string, unknown> } | { error: string } {
  const parsed = gatedTool(gated, name).input.safeParse(input);
  return parsed.success
    ? { arguments: parsed.data as Record<string, unknown> }
    : { error: z.prettifyError(parsed.error) };
}

/**
 * The arguments an accepting answer to a gated call runs with: its content is empty (run the
 * call as the model made it) or the edited arguments as a JSON object, checked against the
 * tool's schema.
 */
export function acceptedArguments(
  gated: GatedTools,
  name: string,
  original: unknown,
  content: string,
): { arguments: Record<string, unknown>; edited: boolean } | { error: string } {
  if (content.trim() === '') {
    const checked = gatedArguments(gated, name, original);
    return 'error' in checked ? checked : { ...checked, edited: false };
  }
  let given: unknown;
  try {
    given = JSON.parse(content);
  } catch {
    return {
      error: `the answer to a ${name} call is its arguments as a JSON object (edited), or empty to run it as asked; got text that is not JSON`,
    };
  }
  const checked = gatedArguments(gated, name, given);
  if ('error' in checked)
    return { error: `the edited arguments of ${name} do not fit its schema: ${checked.error}` };
  const edited = JSON.stringify(checked.arguments) !== JSON.stringify(original);
  return { ...checked, edited };
}

/** Runs an approved gated call with its idempotency key; its effect is the tool's own. */
export function runGatedTool(
  gated: GatedTools,
  name: string,
  input: Record<string, unknown>,
  context: GatedContext,
): Promise<string> {
  return gatedTool(gated, name).run(input, context);
}

/**
 * The tool result the model reads after an approved call ran: the tool's result, and when the
 * person changed the arguments, that they did and which arguments ran.
 */
export function ranResult(
  name: string,
  input: Record<string, unknown>,
  edited: boolean,
  output: string,
): string {
  if (!edited) return output;
  return `The person changed the arguments before approving; ${name} ran with ${JSON.stringify(input)}. Result: ${output}`;
}

/** The question text of a gated call: the call and its arguments. */
export function gatedQuestionText(use: ToolUseBlock): string {
  return `Approve ${use.name} ${JSON.stringify(use.input)}?`;
}

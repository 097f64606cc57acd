import { durationMs } from '@x/policy';
import type { Todo, ToolResultBlock, ToolUseBlock } from '@x/wire';
import { toolResult } from '@x/wire';
import { z } from 'zod';
import { type GatedTools, gatedArguments, gatedQuestionText, isGatedTool } from './gated-tools.js';
import type { ToolSpec } from './model-port.js';

/** The tools that stop the turn to wait for a person. */
export const HUMAN_TOOLS = ['ask_user', 'approve'] as const;
/** `ask_user` or `approve`. */
export type HumanToolName = (typeof HUMAN_TOOLS)[number];

/** True for `ask_user` and `approve`. */
export function isHumanTool(name: string): name is HumanToolName {
  return (HUMAN_TOOLS as readonly string[]).includes(name);
}

const audienceName = z.string().min(1).max(200);

/**
 * Who the model asks to answer: operator names and/or roles. It can only narrow the
 * runner's policy (RUNNER_AUDIENCE), never widen it; see the executive's `questionAudience`.
 */
export const AudienceInputSchema = z
  .object({
    names: z.array(audienceName).max(100).optional().describe('Operators, by name.'),
    roles: z.array(audienceName).max(100).optional().describe('Roles, e.g. "finance".'),
  })
  .describe(
    'Who may answer: operators by name and/or by role. Optional; it can narrow, never widen, who the runner lets answer.',
  );

/** The latest deadline a model may set on a question: 30 days from when it asks. */
export const MAX_MODEL_DEADLINE_MS = 30 * 86_400_000;

/**
 * When the question stops waiting, and what is applied then (the outcome expired). The
 * runner's own deadline (RUNNER_DEADLINE) still holds when it comes first.
 */
export const DeadlineInputSchema = z
  .object({
    at: z.iso.datetime({ offset: true }).optional().describe('When, as an ISO 8601 time.'),
    after: z
      .string()
      .regex(/^\d+\s*(s|m|h|d|w)$/)
      .optional()
      .describe('Or how long from now, e.g. "30m", "24h", "7d" (at most 30 days).'),
    default: z
      .enum(['decline', 'cancel', 'accept'])
      .describe('What is applied if nobody answered in time (accept only for ask_user).'),
    content: z.string().max(2000).optional().describe("The default answer's text, or reason."),
  })
  .strict()
  .refine((d) => (d.at === undefined) !== (d.after === undefined), {
    message: 'give exactly one of at or after',
  })
  .describe('Optional: when the question stops waiting, and the default applied then.');

/** The arguments of an `ask_user` call. */
export const AskUserInputSchema = z.object({
  question: z.string().min(1).describe('The question, in one or two sentences.'),
  options: z.array(z.string().min(1)).optional().describe('Choices to offer, if any.'),
  priority: z.number().int().min(0).max(10).optional().describe('0 (default) to 10; higher first.'),
  audience: AudienceInputSchema.optional(),
  deadline: DeadlineInputSchema.optional(),
});

/** The arguments of an `approve` call. */
export const ApproveInputSchema = z.object({
  action: z.string().min(1).describe('What will be done once approved.'),
  details: z.string().optional().describe('Cost, risk, or anything the person should know.'),
  audience: AudienceInputSchema.optional(),
  deadline: DeadlineInputSchema.optional(),
});

/** The arguments of a `delegate` call: one task per worker. */
export const DelegateInputSchema = z.object({
  tasks: z
    .array(z.string().min(1))
    .min(1)
    .max(8)
    .describe('The sub-tasks, one worker each; each must make sense on its own.'),
});

/** The tool that runs sub-tasks as worker sub-agents; only the parent agent is offered it. */
export const DELEGATE_TOOL = 'delegate';

/** The delegate tool as a model is offered it. */
export const delegateSpec: ToolSpec = {
  name: DELEGATE_TOOL,
  description:
    "Run sub-tasks in parallel, each by a worker sub-agent that may ask the person; returns every worker's report. Call it alone: never with other tools in the same message.",
  inputSchema: z.toJSONSchema(DelegateInputSchema) as Record<string, unknown>,
};

/** Hooks a tool may use while it runs. */
export interface ToolContext {
  progress(message: string): void;
  planUpdated(todos: Todo[]): void;
}

/** A tool that runs as soon as the model calls it. */
export interface OrdinaryTool<Input = unknown> {
  description: string;
  input: z.ZodType<Input>;
  run(input: Input, context: ToolContext): string;
}

/** The ordinary tools a turn offers, by name. */
export type OrdinaryTools = Readonly<Record<string, OrdinaryTool>>;

/** Tools as a model is offered them. */
export function toolSpecsOf(
  tools: Readonly<Record<string, { description: string; input: z.ZodType }>>,
): ToolSpec[] {
  return Object.entries(tools).map(([name, tool]) => ({
    name,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.input) as Record<string, unknown>,
  }));
}

/** The human tools as a model is offered them: every agent gets them. */
export const humanToolSpecs: ToolSpec[] = [
  {
    name: 'ask_user',
    description:
      'Ask the person a question and wait for the answer. Call it alone: never with other tools in the same message.',
    inputSchema: z.toJSONSchema(AskUserInputSchema) as Record<string, unknown>,
  },
  {
    name: 'approve',
    description:
      'Ask the person to approve an action before doing it. Call it alone: never with other tools in the same message.',
    inputSchema: z.toJSONSchema(ApproveInputSchema) as Record<string, unknown>,
  },
];

/** Runs an ordinary tool of `tools`; a bad call becomes an error result the model can read. */
export function runTool(
  tools: OrdinaryTools,
  use: ToolUseBlock,
  context: ToolContext,
): ToolResultBlock {
  const tool = Object.hasOwn(tools, use.name) ? tools[use.name] : undefined;
  if (!tool) return toolResult(use.id, `unknown tool "${use.name}"`, { isError: true });
  const input = tool.input.safeParse(use.input);
  if (!input.success) {
    return toolResult(use.id, `invalid input: ${z.prettifyError(input.error)}`, { isError: true });
  }
  context.progress(`${use.name} ${JSON.stringify(use.input)}`);
  return toolResult(use.id, tool.run(input.data, context));
}

/** The error result for a human tool that was called next to others. */
export function askAloneResult(use: ToolUseBlock): ToolResultBlock {
  return toolResult(
    use.id,
    `${use.name} was not run: it must be the only tool call in its message, because the turn stops there to wait for a person. The other tool calls of that message were run. Call ${use.name} again, alone.`,
    { isError: true },
  );
}

/** How a person answered (the MCP elicitation model). */
export type HumanAnswer =
  | { action: 'accept'; content: string }
  | { action: 'decline'; content: string }
  | { action: 'cancel'; content: string };

/** The start of a declined answer's tool result. */
const DECLINED_PREFIX = 'The user declined';

/** The tool result that carries an accepted or declined answer back to the model. */
export function answerResult(toolUseId: string, answer: HumanAnswer): ToolResultBlock {
  if (answer.action === 'accept') return toolResult(toolUseId, answer.content);
  const reason = answer.content.trim();
  return toolResult(toolUseId, reason ? `${DECLINED_PREFIX}: ${reason}` : `${DECLINED_PREFIX}.`);
}

/**
 * The tool result of a declined gated call: the person's decision and their reason, and that
 * the call did not run (not a tool error).
 */
export function declinedResult(
  toolUseId: string,
  tool: string,
  answer: HumanAnswer,
): ToolResultBlock {
  const reason = answer.content.trim();
  return toolResult(
    toolUseId,
    `${DECLINED_PREFIX}${reason ? `: ${reason}` : '.'} (a person's decision: ${tool} was not run.)`,
  );
}

/** The start of an expired question's tool result. */
const EXPIRED_PREFIX = 'No answer came before the deadline';

/**
 * The tool result of a question nobody answered before its deadline: the model is told so,
 * and which default was applied (never as the person's decision).
 */
export function expiredResult(
  toolUseId: string,
  answer: HumanAnswer,
  deadline: Date,
): ToolResultBlock {
  const applied = `${EXPIRED_PREFIX} (${deadline.toISOString()}); the default (${answer.action}) was applied`;
  const content = answer.content.trim();
  return toolResult(toolUseId, content ? `${applied}: ${content}` : `${applied}.`);
}

/**
 * Who declined, when a tool result carries a decline: the person (with their reason) or a
 * deadline whose default is decline; `undefined` for any other result.
 */
export function declineIn(
  result: string,
): { by: 'person' | 'deadline'; reason: string } | undefined {
  const reasonAfter = (at: number) =>
    result
      .slice(at)
      .replace(/^[:.]\s*/, '')
      .trim();
  if (result.startsWith(DECLINED_PREFIX))
    return { by: 'person', reason: reasonAfter(DECLINED_PREFIX.length) };
  const defaultDecline = '; the default (decline) was applied';
  const at = result.indexOf(defaultDecline);
  if (!result.startsWith(EXPIRED_PREFIX) || at < 0) return undefined;
  return { by: 'deadline', reason: reasonAfter(at + defaultDecline.length) };
}

/** The question a human tool call asks, as plain fields for a pause row. */
export interface Question {
  kind: HumanToolName;
  question: string;
  options: string[] | null;
  priority: number;
  /** Who the model asked to answer, when it named anyone. */
  audience?: ModelAudience;
  /** A gated tool's call waiting for approval: the tool and the arguments the model gave. */
  gated?: { tool: string; arguments: Record<string, unknown> };
  /** The asking kind cannot run the call with other arguments: it may be approved or declined only. */
  fixedArguments?: true;
  /** The deadline the model set, and its default. */
  deadline?: { at: Date; answer: HumanAnswer };
}

/**
 * The deadline a model set, checked: in the future, at most {@link MAX_MODEL_DEADLINE_MS}
 * away, and never an approval's own acceptance (a model may not approve itself by waiting).
 */
function modelDeadline(
  kind: HumanToolName,
  given: z.infer<typeof DeadlineInputSchema> | undefined,
  now: number,
): { deadline?: { at: Date; answer: HumanAnswer } } | { error: string } {
  if (given === undefined) return {};
  if (kind === 'approve' && given.default === 'accept') {
    return {
      error: 'deadline.default: an approval cannot default to accept; use decline or cancel',
    };
  }
  const at =
    given.at === undefined ? now + (durationMs(given.after ?? '') ?? 0) : Date.parse(given.at);
  if (at <= now) return { error: 'deadline: it has passed already; give a time in the future' };
  if (at - now > MAX_MODEL_DEADLINE_MS) return { error: 'deadline: at most 30 days from now' };
  return {
    deadline: { at: new Date(at), answer: { action: given.default, content: given.content ?? '' } },
  };
}

/** The audience a model named in a human tool call: operator names and roles. */
export interface ModelAudience {
  names: string[];
  roles: string[];
}

function modelAudience(given: z.infer<typeof AudienceInputSchema> | undefined) {
  if (given === undefined) return {};
  return { audience: { names: given.names ?? [], roles: given.roles ?? [] } };
}

/** The kind of question a human tool call asks: `approve` for a gated call's approval. */
export function questionKindOf(toolName: string, gated: GatedTools): string {
  return isGatedTool(gated, toolName) ? 'approve' : toolName;
}

/**
 * The question of a human tool call, or an error text when the model's input is bad; a call
 * of one of `gated` asks for its approval.
 */
export function questionOf(
  use: ToolUseBlock,
  now = Date.now(),
  gated: GatedTools = {},
): Question | { error: string } {
  if (isGatedTool(gated, use.name)) {
    const checked = gatedArguments(gated, use.name, use.input);
    if ('error' in checked) return checked;
    return {
      kind: 'approve',
      question: gatedQuestionText(use),
      options: null,
      priority: 5,
      gated: { tool: use.name, arguments: checked.arguments },
    };
  }
  if (use.name === 'approve') {
    const input = ApproveInputSchema.safeParse(use.input);
    if (!input.success) return { error: z.prettifyError(input.error) };
    const { action, details } = input.data;
    const question = details ? `Approve: ${action}? (${details})` : `Approve: ${action}?`;
    const deadline = modelDeadline('approve', input.data.deadline, now);
    if ('error' in deadline) return deadline;
    return {
      kind: 'approve',
      question,
      options: null,
      priority: 5,
      ...modelAudience(input.data.audience),
      ...deadline,
    };
  }
  const input = AskUserInputSchema.safeParse(use.input);
  if (!input.success) return { error: z.prettifyError(input.error) };
  const deadline = modelDeadline('ask_user', input.data.deadline, now);
  if ('error' in deadline) return deadline;
  return {
    kind: 'ask_user',
    question: input.data.question,
    options: input.data.options ?? null,
    priority: input.data.priority ?? 0,
    ...modelAudience(input.data.audience),
    ...deadline,
  };
}

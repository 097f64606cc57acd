import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { AskUserStore, ResumeAnswer } from '@x/askuser';
import { McpElicitationError } from './errors.js';
import { type ElicitationQuestion, type RequestedSchema, readQuestion } from './question.js';

/** The content of an `accept` answer: the fields of the requested schema. */
export type ElicitationContent = NonNullable<ElicitResult['content']>;

/**
 * A person's answer to an elicitation, in MCP's model: `accept` with content matching the
 * requested schema, `decline` (the person said no), or `cancel` (dismissed without a choice).
 */
export type ElicitationAnswer =
  | { action: 'accept'; content: ElicitationContent }
  | { action: 'decline' }
  | { action: 'cancel' };

let validator: AjvJsonSchemaValidator | undefined;

/**
 * Checks an answer against its question and writes it the way its pause stores it: an
 * `accept` content as JSON text (with the schema's defaults filled in first when the
 * client applies defaults, as the SDK client does).
 *
 * @throws {McpElicitationError} `invalid_answer` for an unknown action or content on a
 *   decline/cancel; `invalid_content` for accept content that does not match the schema.
 */
export function checkAnswer(
  question: ElicitationQuestion,
  answer: ElicitationAnswer,
): ResumeAnswer {
  const { token } = question;
  const given = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<
    string,
    unknown
  >;
  if (given.action === 'decline' || given.action === 'cancel') {
    if (given.content !== undefined) {
      throw new McpElicitationError('invalid_answer', `a ${given.action} carries no content`, {
        token,
      });
    }
    return { action: given.action, content: '' };
  }
  if (given.action !== 'accept') {
    throw new McpElicitationError(
      'invalid_answer',
      `the action must be accept, decline or cancel, got ${JSON.stringify(given.action) ?? typeof given.action}`,
      { token },
    );
  }
  const content = question.applyDefaults
    ? withDefaults(question.requestedSchema, given.content)
    : given.content;
  validator ??= new AjvJsonSchemaValidator();
  const result = validator.getValidator(question.requestedSchema)(content);
  if (!result.valid) {
    throw new McpElicitationError(
      'invalid_content',
      `the answer to ${JSON.stringify(question.message)} does not match the schema the server requested: ${result.errorMessage}`,
      { token },
    );
  }
  return { action: 'accept', content: JSON.stringify(content) };
}

// The SDK client fills in defaults after its handler returns: check what the server will get.
function withDefaults(schema: RequestedSchema, content: unknown): unknown {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return content;
  const filled: Record<string, unknown> = { ...content };
  for (const [key, property] of Object.entries(schema.properties)) {
    if (filled[key] === undefined && 'default' in property) filled[key] = property.default;
  }
  return filled;
}

/** The MCP result a stored answer stands for. */
export function toElicitResult(answer: ResumeAnswer): ElicitResult {
  if (answer.action !== 'accept') return { action: answer.action };
  return { action: 'accept', content: JSON.parse(answer.content) as ElicitationContent };
}

/**
 * Answers an MCP elicitation pause, from any process: the answer is checked against the
 * schema the server requested (an `accept` must match it) and stored with the pause. The
 * client that holds the request (or comes back for it, see `durableElicitations`) sends
 * it to the server.
 *
 * @throws {McpElicitationError} `invalid_answer` / `invalid_content` (nothing is stored),
 *   `not_elicitation` for a pause of another kind.
 * @throws {AskUserError} `not_found` (from `@x/askuser`) for an unknown or already answered token.
 * @example
 * await answerElicitation(store, token, { action: 'accept', content: { date: '2026-07-01', guests: 4 } });
 */
export async function answerElicitation(
  store: AskUserStore,
  token: string,
  answer: ElicitationAnswer,
): Promise<void> {
  const question = readQuestion(await store.getByToken(token));
  await store.markResumed(token, checkAnswer(question, answer));
}

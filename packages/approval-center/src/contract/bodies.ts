import { z } from 'zod';

/** The most answers one `POST /api/pauses/answer-batch` takes. */
export const MAX_BATCH = 500;

/** How an operator answers (MCP elicitation): `accept`, `decline` or `cancel`. */
export const answerActionSchema = z.enum(['accept', 'decline', 'cancel']);

/** How an operator answers (MCP elicitation): `accept`, `decline` or `cancel`. */
export type AnswerAction = z.infer<typeof answerActionSchema>;

/**
 * The answer bodies with `content` checked by the given schema: a server passes its own
 * storage limit in (the runner refuses content over 16,384 characters or holding a NUL), a
 * client takes {@link answerBodySchema} and {@link batchBodySchema} as they are.
 * @param content the schema of an answer's `content`; an absent `content` is `''`
 */
export function answerSchemasWith(content: z.ZodType<string> = z.string()) {
  const answer = z.object({ action: answerActionSchema, content: content.default('') }).strict();
  const batch = z
    .object({
      answers: z
        .array(
          z
            .object({ token: z.string().min(1).max(1000) })
            .extend(answer.shape)
            .strict(),
        )
        .min(1)
        .max(MAX_BATCH),
    })
    .strict();
  return { answer, batch };
}

const answerSchemas = answerSchemasWith();

/** Body of `POST /api/pauses/:token/answer` (MCP elicitation: accept, decline, cancel). */
export const answerBodySchema = answerSchemas.answer;

/** Body of `POST /api/pauses/:token/answer`, and an answer as the API shows it. */
export type AnswerBody = z.output<typeof answerBodySchema>;

/** Body of `POST /api/pauses/answer-batch`: all answered, or none. */
export const batchBodySchema = answerSchemas.batch;

/** Body of `POST /api/pauses/answer-batch`: all answered, or none. */
export type BatchBody = z.output<typeof batchBodySchema>;

/** Body of `POST /api/conversations/:id/stop`: nothing to say (`{}`, or no body). */
export const stopBodySchema = z.object({}).strict();

/** Body of `POST /api/conversations/:id/stop`. */
export type StopBody = z.output<typeof stopBodySchema>;

/** Body of `POST /api/sign-in`: an operator's key (or the server's --token), and whose. */
export const signInBodySchema = z
  .object({
    key: z.string().min(1).max(1000),
    /** When given, the key must be this operator's. */
    name: z.string().min(1).max(200).optional(),
  })
  .strict();

/** Body of `POST /api/sign-in`: an operator's key (or the server's --token), and whose. */
export type SignInBody = z.output<typeof signInBodySchema>;

/** Body of `POST /api/runs`: a new run of `conversation` toward `goal`. */
export const startRunBodySchema = z
  .object({
    goal: z
      .string()
      .trim()
      .min(1)
      .max(32 * 1024),
    conversation: z.string().min(1).max(200),
    /** The model id (default: the server's). */
    model: z.string().min(1).max(200).optional(),
    /** Stop the conversation's open work first (as `exec --replace`). */
    replace: z.boolean().default(false),
  })
  .strict();

/** Body of `POST /api/runs` as a client sends it (`replace` may be left out). */
export type StartRunBody = z.input<typeof startRunBodySchema>;

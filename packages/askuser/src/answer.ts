import { z } from 'zod';

/** The person accepted: `content` becomes the tool result the model sees. */
export const ACTION_ACCEPT = 'accept';
/** The person declined: the tool result tells the model so. */
export const ACTION_DECLINE = 'decline';
/** The person cancelled: the turn is aborted without resuming. */
export const ACTION_CANCEL = 'cancel';

/** The three resolution actions of the MCP elicitation model, by name. */
export const actions = {
  accept: ACTION_ACCEPT,
  decline: ACTION_DECLINE,
  cancel: ACTION_CANCEL,
} as const;

/**
 * The `content` that `autoResolveForConversation` stores (with action `cancel`) for every
 * pause it closes when a conversation loop stops; `PauseRecord.resumedAnswer` shows it.
 */
export const AUTO_TERMINATED_MARKER = '[auto-terminated: conversation loop stopped]';

/** Schema of a resume answer, persisted as `resumed_answer` jsonb. */
export const resumeAnswerSchema = z
  .object({
    action: z.enum([ACTION_ACCEPT, ACTION_DECLINE, ACTION_CANCEL]),
    content: z.string(),
  })
  .strict();

/**
 * How a person resolved a pause: `{ action, content }`. `content` is the answer for
 * `accept` and may be `''` for `decline` / `cancel`.
 */
export type ResumeAnswer = z.infer<typeof resumeAnswerSchema>;

/** One of `accept`, `decline`, `cancel`. */
export type ResumeAction = ResumeAnswer['action'];

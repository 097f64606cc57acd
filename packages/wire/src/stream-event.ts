import { z } from 'zod';
import { JsonValueSchema } from './json.js';

/** One item of an agent's plan. */
export const TodoSchema = z.object({
  id: z.string().min(1),
  content: z.string(),
  status: z.enum(['pending', 'in_progress', 'completed']),
});
export type Todo = z.infer<typeof TodoSchema>;

/** Why a turn stopped. */
export const TurnEndReasonSchema = z.enum([
  /** The model finished its answer. */
  'completed',
  /** The turn waits on a person (a suspension was saved). */
  'suspended',
  /** The person cancelled; nothing resumes. */
  'cancelled',
  /** The turn failed; `error` says why. */
  'failed',
]);
export type TurnEndReason = z.infer<typeof TurnEndReasonSchema>;

/**
 * What a turn emits while it runs, for a UI or a log. Names are noun-verb, like the AI SDK's.
 */
export const StreamEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text-delta'), text: z.string() }),
  z.object({ type: z.literal('tool-progress'), toolCallId: z.string(), message: z.string() }),
  z.object({ type: z.literal('plan-updated'), todos: z.array(TodoSchema) }),
  z.object({
    type: z.literal('interrupt-raised'),
    toolCallId: z.string(),
    kind: z.string(),
    payload: JsonValueSchema,
  }),
  z.object({
    type: z.literal('interrupt-resolved'),
    toolCallId: z.string(),
    result: JsonValueSchema,
  }),
  z.object({
    type: z.literal('turn-ended'),
    reason: TurnEndReasonSchema,
    error: z.string().optional(),
  }),
]);
export type StreamEvent = z.infer<typeof StreamEventSchema>;

import { type JsonValue, JsonValueSchema } from '@x/wire';
import { z } from 'zod';
import { canonicalJson } from './canonical-json.js';

/** Where an interrupt is in its life: waiting for the host, or answered. */
export const InterruptStatusSchema = z.enum(['pending', 'resolved']);
/** `pending` (waiting for the host) or `resolved` (answered, not yet taken by its tool). */
export type InterruptStatus = z.infer<typeof InterruptStatusSchema>;

/**
 * A tool call parked until the host answers. `id` is the id of the tool call it parks.
 * `payload` is what the tool asks (JSON), `result` the host's answer once resolved.
 * `requesters` is set on adopted interrupts: the chain of interrupt ids the answer must be
 * routed down to, nearest first (the child agent's interrupt id, then its child's, ...).
 */
export const InterruptSchema = z.object({
  id: z.string().min(1),
  kind: z.string().min(1),
  payload: JsonValueSchema,
  status: InterruptStatusSchema,
  result: JsonValueSchema.optional(),
  requesters: z.array(z.string().min(1)).optional(),
});

/** See {@link InterruptSchema}. */
export interface Interrupt {
  id: string;
  kind: string;
  payload: JsonValue;
  status: InterruptStatus;
  result?: JsonValue;
  requesters?: string[];
}

/** A map of interrupts by id, as checkpointed: each key is its interrupt's id. */
export const InterruptMapSchema = z.record(z.string(), InterruptSchema).superRefine((map, ctx) => {
  for (const [key, value] of Object.entries(map)) {
    if (value.id !== key) {
      ctx.addIssue({
        code: 'custom',
        path: [key, 'id'],
        message: `interrupt under key "${key}" has id "${value.id}"`,
      });
    }
  }
});

/** {@link InterruptMapSchema} whose interrupts all have `status` (internal). */
export function interruptMapWithStatus(status: InterruptStatus) {
  return InterruptMapSchema.superRefine((map, ctx) => {
    for (const [key, value] of Object.entries(map)) {
      if (value.status !== status) {
        ctx.addIssue({
          code: 'custom',
          path: [key, 'status'],
          message: `expected status "${status}"`,
        });
      }
    }
  });
}

/**
 * (Internal.) Deep copy with the fields in schema order and the payload's and result's keys
 * sorted at every depth (so equal interrupts serialise to equal bytes, however they were
 * built). Interrupts hold only JSON values.
 */
export function cloneInterrupt(interrupt: Interrupt): Interrupt {
  const copy: Interrupt = {
    id: interrupt.id,
    kind: interrupt.kind,
    payload: canonicalJson(interrupt.payload),
    status: interrupt.status,
  };
  if (interrupt.result !== undefined) copy.result = canonicalJson(interrupt.result);
  if (interrupt.requesters !== undefined) copy.requesters = [...interrupt.requesters];
  return copy;
}

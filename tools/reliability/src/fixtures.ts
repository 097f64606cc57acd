import { createSuspension, type Suspension } from '@x/continuation';
import { CHECKPOINT_VERSION, type SessionCheckpoint } from '@x/session';
import type { AssistantMessage, Message } from '@x/wire';

/** Transcript lengths cycle so records stay small however many writes a run makes. */
const TRANSCRIPT_CYCLE = 40;

/**
 * A suspension whose content is a function of `turns`: `toolInput.turns === turns` and
 * `messages.length === 2 * (turns % 40) + 2`, so a torn or mixed record is detectable.
 */
export function suspensionAt(interactionId: string, turns: number, sessionId?: string): Suspension {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'go on' }] }];
  for (let k = 0; k < turns % TRANSCRIPT_CYCLE; k++) {
    const id = `toolu_${k}`;
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'lookup', input: { k } }],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: `r${k}` }],
    });
  }
  const toolUseId = `toolu_ask_${turns}`;
  const assistant: AssistantMessage = {
    role: 'assistant',
    content: [{ type: 'tool_use', id: toolUseId, name: 'ask_user', input: { turns } }],
  };
  messages.push(assistant);
  return createSuspension({
    interactionId,
    toolUseId,
    assistant,
    messages,
    ...(sessionId === undefined ? {} : { sessionId }),
  });
}

/** The `turns` a suspension was built with, or a reason it is not one of {@link suspensionAt}. */
export function turnsOf(s: Suspension): number | string {
  const turns = (s.toolInput as { turns?: unknown } | undefined)?.turns;
  if (typeof turns !== 'number') return 'toolInput.turns missing';
  const want = 2 * (turns % TRANSCRIPT_CYCLE) + 2;
  if (s.messages?.length !== want)
    return `turns ${turns} but ${s.messages?.length} messages (want ${want})`;
  if (s.toolUseId !== `toolu_ask_${turns}`) return `turns ${turns} but toolUseId ${s.toolUseId}`;
  return turns;
}

/** A valid checkpoint whose content is a function of `n` (see {@link counterOf}). */
export function checkpointAt(n: number): SessionCheckpoint {
  return {
    version: CHECKPOINT_VERSION,
    window: [
      { role: 'user', content: [{ type: 'text', text: `hello ${n}` }] },
      { role: 'assistant', content: [{ type: 'text', text: `reply ${n}` }] },
    ],
    runtimeState: { counter: n, pad: 'x'.repeat((n * 37) % 4000) },
    interrupts: { pending: {}, resolved: {} },
    pendingToolCalls: {},
    interruptToRequester: {},
  };
}

/** The `n` a checkpoint was built with, or a reason it is not one of {@link checkpointAt}. */
export function counterOf(c: SessionCheckpoint): number | string {
  const n = c.runtimeState.counter;
  const pad = c.runtimeState.pad;
  if (typeof n !== 'number' || typeof pad !== 'string') return 'counter/pad missing';
  if (pad.length !== (n * 37) % 4000) return `counter ${n} but pad of ${pad.length}`;
  const first = c.window[0]?.content[0];
  if (first?.type !== 'text' || first.text !== `hello ${n}`)
    return `counter ${n} but window differs`;
  return n;
}

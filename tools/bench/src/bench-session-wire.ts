import { Checkpointer, SessionManager } from '@x/session';
import {
  fromModelMessages,
  fromOpenAIChat,
  parseMessages,
  toModelMessages,
  toOpenAIChat,
} from '@x/wire';
import { kb, ratio } from './bench-continuation.js';
import type { Context } from './context.js';
import { measure } from './measure.js';
import { transcript } from './transcript.js';

/** Checkpointer.capture + JSON.stringify of a 1,000-message window vs JSON.stringify of the window. */
export async function benchSession(ctx: Context): Promise<void> {
  const window = transcript(1000);
  const session = new SessionManager();
  session.stateSet('city', 'Lisbon');
  session.plan().set([{ id: '1', content: 'Ask for the city', status: 'in_progress' }]);
  const checkpointer = new Checkpointer();
  let sink = 0;
  const stats = await measure(
    {
      floor: () => {
        sink += JSON.stringify(window).length;
      },
      subject: () => {
        sink += JSON.stringify(checkpointer.capture(window, session)).length;
      },
    },
    ctx.budget,
  );
  if (sink === 0) throw new Error('nothing serialised');
  ctx.add({
    section: '@x/session',
    name: `capture + JSON, 1000-msg window (${kb(JSON.stringify(window))})`,
    goal: { kind: 'at-most', value: 1.5, label: '≤ 1.5' },
    ratio: ratio(stats.subject?.median, stats.floor?.median),
    ratioMeaning: 'subject/floor',
    subject: stats.subject,
    floor: stats.floor,
  });
}

/** parseMessages vs JSON.parse, and the four converters in messages per second. */
export async function benchWire(ctx: Context): Promise<void> {
  const messages = transcript(1000);
  const text = JSON.stringify(messages);
  const stats = await measure(
    {
      floor: () => JSON.parse(text),
      subject: () => parseMessages(JSON.parse(text)),
    },
    ctx.budget,
  );
  ctx.add({
    section: '@x/wire',
    name: `JSON.parse + parseMessages, 1000 msgs (${kb(text)})`,
    goal: { kind: 'at-most', value: 3, label: '≤ 3' },
    ratio: ratio(stats.subject?.median, stats.floor?.median),
    ratioMeaning: 'subject/floor',
    subject: stats.subject,
    floor: stats.floor,
  });
  const openai = toOpenAIChat(messages);
  const model = toModelMessages(messages);
  const converters = {
    toOpenAIChat: () => toOpenAIChat(messages),
    fromOpenAIChat: () => fromOpenAIChat(openai),
    toModelMessages: () => toModelMessages(messages),
    fromModelMessages: () => fromModelMessages(model),
  };
  const converted = await measure(converters, ctx.budget);
  for (const name of Object.keys(converters)) {
    const s = converted[name];
    ctx.add({
      section: '@x/wire',
      name: `${name}, 1000 msgs`,
      goal: { kind: 'info', label: 'msgs/s' },
      ratio: s ? (messages.length / s.median) * 1000 : Number.NaN,
      ratioMeaning: 'msgs/s',
      subject: s,
      extra: { floorJsonParseMedianMs: stats.floor?.median },
    });
  }
}

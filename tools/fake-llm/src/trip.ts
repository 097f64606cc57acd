import type { Script } from './turn.js';

/**
 * The examples' model: it asks the person where to go (`ask_user`), then books the trip
 * with whichever of `book_trip` / `get_weather` the request offers, then sums up. Each
 * step is decided from the conversation alone, so a resumed turn gets the same answers.
 */
export const tripPlanner: Script = ({ tools, calls }) => {
  const ask = calls.find((call) => call.name === 'ask_user');
  if (!ask)
    return { toolCall: { name: 'ask_user', input: { question: 'Where would you like to go?' } } };
  if (ask.result === undefined) throw new Error('ask_user has no result yet');
  const next = ['book_trip', 'get_weather'].find(
    (name) => tools.includes(name) && !calls.some((call) => call.name === name),
  );
  if (next) return { toolCall: { name: next, input: { city: ask.result } } };
  const last = calls.at(-1);
  return { text: `Your trip to ${ask.result}: ${last?.result ?? 'planned'}.` };
};

import type { Script } from './turn.js';

/**
 * The approval examples' model: it books the city the person names in their first message
 * (`book_trip`, "…to Porto"; Lisbon when none), then confirms with the tool's result, or with
 * the reason the person gave when they rejected the call.
 */
export const tripBooker: Script = ({ calls, userText }) => {
  const booked = calls.find((call) => call.name === 'book_trip');
  if (!booked) {
    const city = /to (\w+)/.exec(userText)?.[1] ?? 'Lisbon';
    return { toolCall: { name: 'book_trip', input: { city } } };
  }
  return { text: `Your trip: ${booked.result ?? ''}.` };
};

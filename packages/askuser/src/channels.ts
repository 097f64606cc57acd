/**
 * The channel notified (payload: the token) when a pause is inserted. `LISTEN`
 * on it to stream new questions, e.g. to an approval center. Delivered on commit.
 */
export const ASKUSER_CREATED_CHANNEL = 'askuser_created';

/**
 * The channel notified (payload: the token) when a pause goes from pending to
 * resolved, by any of the resolve methods. An executive's wake loop `LISTEN`s on it, then
 * reads the answer with `getAnswer` / `listAnswered` (notifications are a hint: one missed
 * while no listener ran is found by `listAnswered`).
 */
export const ASKUSER_ANSWERED_CHANNEL = 'askuser_answered';

import { unstorableText } from '@x/postgres-kit';

// Apart from record-answer.ts: the help reads the limit without loading the executive.

/**
 * The longest answer's content taken, in characters (Unicode code points), whichever way it
 * comes: `runner answer` (one or a batch), a chat, the API (one or its batch form), a
 * decision link, Slack. One limit, far within what a turn's continuation keeps (16 MiB), so
 * that an answer never makes its run unsavable.
 */
export const MAX_ANSWER_CHARS = 16_384;

/** {@link MAX_ANSWER_CHARS} as the messages say it: `16,384 characters`. */
export const MAX_ANSWER_TEXT = `${MAX_ANSWER_CHARS.toLocaleString('en-US')} characters`;

/**
 * How many characters (code points) `content` has when it may be over the limit; within its
 * UTF-16 length (never fewer units than code points) it is not counted.
 */
function charactersOf(content: string): number {
  if (content.length <= MAX_ANSWER_CHARS) return content.length;
  let count = 0;
  for (const _ of content) count++;
  return count;
}

/**
 * What is wrong with an answer's `content`, as the end of a sentence, or `undefined`: over
 * {@link MAX_ANSWER_CHARS} (the message names the limit), or holding a NUL or a lone
 * surrogate, which no database stores.
 */
export function answerContentProblem(content: string): string | undefined {
  const length = charactersOf(content);
  if (length > MAX_ANSWER_CHARS) {
    return `is ${length.toLocaleString('en-US')} characters, over the limit of ${MAX_ANSWER_TEXT} for an answer`;
  }
  const unstorable = unstorableText(content);
  return unstorable === undefined ? undefined : `holds ${unstorable}, which cannot be stored`;
}

// C0 and C1 controls, DEL, and the invisible characters that reorder or break a line (bidi
// controls, U+2028/9): shown raw, a call's arguments could disguise what the operator approves.
const HIDDEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const HIDDEN_OR_BREAK =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
  /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every control character escaped as `\x1b` or `\u202e`, so that the page shows
 * what a value holds; newlines and tabs are kept, unless `oneLine` (a title, a list row).
 */
export function shown(text: string, oneLine = false): string {
  return text.replace(oneLine ? HIDDEN_OR_BREAK : HIDDEN, (c) => {
    const code = c.charCodeAt(0);
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON text with the invisible characters JSON.stringify leaves raw (bidi controls, U+2028/9)
 * written as `\u` escapes: the same value once parsed, shown as what it holds.
 */
export function shownJson(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

// Internal: what the `to…` converters accept, checked the same way by both.
import { describe } from './convert-util.js';
import { WireError } from './errors.js';
import { checkTranscript, type Message, parseMessages } from './message.js';
import { isParsedMessages } from './parsed-messages.js';

/**
 * The transcript a `to…` converter may write: exactly what {@link parseMessages} accepts
 * (the schema, then the pairing rules), in the form it returns. A transcript already in that
 * form is used as it is; anything else goes through the schema (which also turns
 * `content: "hi"` into a text block and drops unknown fields).
 */
export function converterMessages(input: unknown): Message[] {
  if (!isParsedMessages(input)) return parseMessages(input);
  checkTranscript(input);
  return input;
}

/** The `system` option of a `to…` converter: absent, or a string. */
export function converterSystem(options: unknown): string | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new WireError('invalid', `options: expected an object, received ${describe(options)}`, {
      path: ['options'],
    });
  }
  let system: unknown;
  try {
    system = (options as { system?: unknown }).system;
  } catch (cause) {
    throw new WireError('invalid', `options.system: could not be read (${String(cause)})`, {
      path: ['options', 'system'],
      cause,
    });
  }
  if (system !== undefined && typeof system !== 'string') {
    throw new WireError(
      'invalid',
      `options.system: expected a string, received ${describe(system)}`,
      { path: ['options', 'system'] },
    );
  }
  return system;
}

/**
 * Runs a conversion of validated input. Validation already refused everything malformed; a
 * failure here means the input changed while it was read (a getter, a proxy), and it still
 * leaves as a WireError, as the package promises for any input.
 */
export function converting<T>(convert: () => T): T {
  try {
    return convert();
  } catch (cause) {
    if (WireError.is(cause)) throw cause;
    throw new WireError('invalid', `messages: could not be converted (${String(cause)})`, {
      cause,
    });
  }
}

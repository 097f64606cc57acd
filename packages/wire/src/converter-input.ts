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

/** The `system` option of a `to…` converter: absent, or a string. Paths are relative to `options`. */
export function converterSystem(options: unknown): string | undefined {
  if (options === undefined) return undefined;
  if (
    typeof options !== 'object' ||
    options === null ||
    read('options', [], () => Array.isArray(options))
  ) {
    throw new WireError('invalid', `options: expected an object, received ${describe(options)}`);
  }
  const system = read('options.system', ['system'], () => (options as { system?: unknown }).system);
  if (system !== undefined && typeof system !== 'string') {
    throw new WireError(
      'invalid',
      `options.system: expected a string, received ${describe(system)}`,
      { path: ['system'] },
    );
  }
  return system;
}

/** Reads a value that a getter or a revoked proxy may refuse to give, as a WireError. */
function read<T>(what: string, path: string[], get: () => T): T {
  try {
    return get();
  } catch (cause) {
    throw new WireError('invalid', `${what}: could not be read (${String(cause)})`, {
      path,
      cause,
    });
  }
}

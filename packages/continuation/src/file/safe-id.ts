import { ContinuationError } from '../errors.js';

/** Longest id that may become a file name (leaves room for suffixes within 255 bytes). */
export const MAX_ID_LENGTH = 200;

const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * Refuses an id that would not be a plain file name of its own: empty, over
 * {@link MAX_ID_LENGTH} characters, starting with `.` (covers `.` and `..`, and keeps ids
 * apart from the store's hidden temp files), or holding anything but ASCII letters, digits,
 * `.`, `_` and `-` (so no `/`, `\`, NUL, spaces or drive letters). Checked before any
 * path is built.
 *
 * @throws {ContinuationError} `unsafe_id`.
 */
export function assertSafeId(kind: string, id: string): void {
  if (typeof id === 'string' && id.length <= MAX_ID_LENGTH && SAFE_ID.test(id)) return;
  const shown = typeof id === 'string' ? JSON.stringify(id.slice(0, 80)) : String(id);
  const why =
    typeof id !== 'string' || id.length === 0
      ? 'is empty'
      : id.length > MAX_ID_LENGTH
        ? `is longer than ${MAX_ID_LENGTH} characters`
        : 'is not a safe file name';
  throw new ContinuationError(
    'unsafe_id',
    `${kind} ${shown} ${why}: use 1 to ${MAX_ID_LENGTH} letters, digits, '.', '_' and '-', not starting with '.'`,
    typeof id === 'string' ? { interactionId: id } : {},
  );
}

import { basename, dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContinuationError } from './errors.js';
import { MAX_ID_LENGTH } from './safe-id.js';
import { assertSafeId } from './store.js';

describe('assertSafeId', () => {
  it('any string is either refused with unsafe_id or stays one file name inside the folder (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 250 }),
          fc.stringMatching(/^[A-Za-z0-9._\-/\\]{0,12}$/),
          fc.constantFrom('..', '.', '../..', 'a/../b', 'C:\\x', '\u0000', 'ok-id_1.2'),
        ),
        (id) => {
          let safe = true;
          try {
            assertSafeId('interaction id', id);
          } catch (err) {
            expect(ContinuationError.is(err) && err.code).toBe('unsafe_id');
            safe = false;
          }
          if (safe) {
            const path = join('/store', `${id}.json`);
            expect(dirname(path)).toBe('/store');
            expect(basename(path)).toBe(`${id}.json`);
            expect(id.startsWith('.')).toBe(false);
            expect(id.length).toBeLessThanOrEqual(MAX_ID_LENGTH);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('accepts ordinary ids', () => {
    for (const id of [
      'ask-1',
      'toolu_01ABC',
      '550e8400-e29b-41d4-a716-446655440000',
      'a.b',
      'x'.repeat(MAX_ID_LENGTH),
    ]) {
      expect(() => assertSafeId('interaction id', id)).not.toThrow();
    }
  });
});

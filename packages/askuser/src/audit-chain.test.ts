import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entryHash, sign, signatureValid } from './audit-chain.js';

describe('audit hashing', () => {
  it("signs byte for byte as createHmac('sha256'), for keys shorter and longer than a block", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 200 }),
        fc.array(fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string({ unit: 'grapheme' })), {
          minLength: 1,
          maxLength: 4,
        }),
        (bytes, messages) => {
          const key = Buffer.from(bytes);
          // One after the other under one key: what the pads hold from the last one never leaks.
          for (const message of messages) {
            const want = createHmac('sha256', key).update(message).digest('hex');
            expect(sign(key, message)).toBe(want);
            expect(signatureValid(key, message, want)).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('hashes an entry as a createHash chain of its JSON fields does', () => {
    const fields = {
      chain: 'conversation:c1',
      seq: 3,
      kind: 'question-answered',
      at: '2026-01-01T00:00:00.000Z',
      token: 'tok-é',
      body: '{"a":1}',
      prev: '0'.repeat(64),
    };
    const text = JSON.stringify([1, ...Object.values(fields)]);
    expect(entryHash(fields)).toBe(createHash('sha256').update(text).digest('hex'));
  });
});

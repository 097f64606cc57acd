import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';

/** The suffix of a stored type whose blob is Brotli-compressed serializer output. */
const BROTLI = '+br';

/**
 * Below this many bytes a value is stored as the serializer wrote it: Brotli's frame would
 * eat most of what it saves, and the row stays small anyway.
 */
const MIN_COMPRESSED_BYTES = 256;

/**
 * A serializer's `[type, bytes]` as stored: compressed with Brotli (its type suffixed with
 * `+br`) when that is smaller, else unchanged. Postgres compresses only rows over 2 kB (with
 * pglz, which finds far less in a growing transcript), and every stored byte is written to
 * the WAL too.
 */
export function packBlob(type: string, bytes: Uint8Array): [string, Uint8Array] {
  if (bytes.byteLength < MIN_COMPRESSED_BYTES) return [type, bytes];
  const packed = brotliCompressSync(bytes, {
    params: {
      // Quality 4: a 1,000-message transcript in a third of pglz's bytes, at a millisecond.
      [constants.BROTLI_PARAM_QUALITY]: 4,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
    },
  });
  return packed.byteLength < bytes.byteLength ? [`${type}${BROTLI}`, packed] : [type, bytes];
}

/** The serializer's `[type, bytes]` of a stored blob, as {@link packBlob} was given them. */
export function unpackBlob(type: string, bytes: Uint8Array): [string, Uint8Array] {
  if (!type.endsWith(BROTLI)) return [type, bytes];
  return [type.slice(0, -BROTLI.length), brotliDecompressSync(bytes)];
}

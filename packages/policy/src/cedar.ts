import { createRequire } from 'node:module';
import type * as Cedar from '@cedar-policy/cedar-wasm/nodejs';

const require = createRequire(import.meta.url);
let engine: typeof Cedar | undefined;

/**
 * Cedar's engine, loaded on its first use: compiling its 4 MB of WebAssembly costs a process
 * about a tenth of a second, which one that imports this package but never decides skips.
 */
export function cedar(): typeof Cedar {
  engine ??= require('@cedar-policy/cedar-wasm/nodejs') as typeof Cedar;
  return engine;
}

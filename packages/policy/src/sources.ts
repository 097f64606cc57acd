import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { PolicyError } from './errors.js';
import type { PolicySource } from './load.js';

/**
 * Reads Cedar files for {@link loadPolicySet}: each path a `.cedar` file, or a folder whose
 * `.cedar` files (not its subfolders) are read in name order; each source named by its path.
 * A path that cannot be read is refused with a {@link PolicyError} (`invalid_argument`).
 */
export async function readPolicySources(paths: readonly string[]): Promise<PolicySource[]> {
  const sources: PolicySource[] = [];
  for (const given of paths) {
    try {
      const files = (await stat(given)).isDirectory()
        ? (await readdir(given))
            .filter((name) => name.endsWith('.cedar'))
            .sort()
            .map((name) => path.join(given, name))
        : [given];
      for (const file of files) sources.push({ name: file, text: await readFile(file, 'utf8') });
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new PolicyError(
        'invalid_argument',
        `cannot read policies from ${JSON.stringify(given)} (${why})`,
        {
          cause: err,
        },
      );
    }
  }
  return sources;
}

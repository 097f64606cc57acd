import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { PolicySource } from './load.js';

/**
 * Reads Cedar files for {@link loadPolicySet}: each path a `.cedar` file, or a folder whose
 * `.cedar` files (not its subfolders) are read in name order; each source named by its path.
 */
export async function readPolicySources(paths: readonly string[]): Promise<PolicySource[]> {
  const sources: PolicySource[] = [];
  for (const given of paths) {
    const files = (await stat(given)).isDirectory()
      ? (await readdir(given))
          .filter((name) => name.endsWith('.cedar'))
          .sort()
          .map((name) => path.join(given, name))
      : [given];
    for (const file of files) sources.push({ name: file, text: await readFile(file, 'utf8') });
  }
  return sources;
}

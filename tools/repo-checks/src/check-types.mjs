// Are the types wrong? Each packed tarball is checked as TypeScript resolves it for an ESM
// user (node16 from ESM, bundler): every entry point must resolve to types that match its
// JavaScript. CommonJS resolution is not checked: the packages are ESM only (STYLE.md).
import { readFileSync } from 'node:fs';
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';

/** The resolutions an ESM-only package is not written for (attw's `esm-only` profile). */
const NOT_FOR_ESM_ONLY = new Set(['node10', 'node16-cjs']);

/**
 * The problems @arethetypeswrong/core finds in each tarball, one line each.
 * @param {Map<string, string>} tarballs package name → tarball path
 * @returns {Promise<string[]>}
 */
export async function typeProblems(tarballs) {
  const problems = [];
  for (const [name, file] of tarballs) {
    const pkg = createPackageFromTarballData(new Uint8Array(readFileSync(file)));
    const result = await checkPackage(pkg);
    if (!result.types) {
      problems.push(`${name}: attw finds no types in the packed package`);
      continue;
    }
    for (const problem of result.problems) {
      if (NOT_FOR_ESM_ONLY.has(problem.resolutionKind)) continue;
      const where = [problem.entrypoint, problem.resolutionKind, problem.typesFileName]
        .filter(Boolean)
        .join(', ');
      problems.push(`${name}: attw: ${problem.kind}${where ? ` (${where})` : ''}`);
    }
  }
  return problems;
}

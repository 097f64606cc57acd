#!/usr/bin/env node
// Checks that every published workspace (not "private") is fit for npm: publint finds no
// error or warning, and the house rules of STYLE.md hold (ESM only, side-effect free,
// exports with types, only dist, migrations and docs shipped, a README and a LICENSE of its
// own, source maps that carry their sources, dependencies given as ranges, never one version,
// the root's repository with the package's folder), and attw finds the packed types right for ESM.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { rootOf, workspacesOf } from './check-imports.mjs';
import { typeProblems } from './check-types.mjs';
import { packLocal } from './pack-local.mjs';

const ALLOWED_FILES = new Set(['dist', 'drizzle', 'docs']);

/**
 * House rules for one manifest.
 * @param {Record<string, any>} manifest
 * @param {string} dir
 * @returns {string[]}
 */
export function houseRules(manifest, dir) {
  const problems = [];
  if (manifest.type !== 'module') problems.push('"type" must be "module" (ESM only)');
  if (manifest.sideEffects !== false) problems.push('"sideEffects" must be false');
  const files = manifest.files ?? [];
  if (files.length === 0) problems.push('"files" must list what ships');
  for (const f of files) {
    if (!f.startsWith('!') && !ALLOWED_FILES.has(f))
      problems.push(`"files" ships "${f}": only dist/, drizzle/ and docs/`);
  }
  const exports = manifest.exports ?? {};
  for (const [subpath, target] of Object.entries(exports)) {
    if (subpath === './package.json') continue;
    if (typeof target !== 'object' || !target.types || !target.default) {
      problems.push(`exports["${subpath}"] must give "types" and "default"`);
    }
  }
  if (!exports['.']) problems.push('exports must have "."');
  if (!existsSync(path.join(dir, 'README.md'))) problems.push('README.md is missing');
  if (!manifest.description) problems.push('"description" is missing');
  if (!manifest.license) problems.push('"license" is missing');
  else if (!existsSync(path.join(dir, 'LICENSE'))) {
    problems.push(
      `LICENSE is missing: npm ships it in the tarball (the package says ${manifest.license})`,
    );
  }
  problems.push(...sourceMapProblems(dir));
  problems.push(...pinnedDependencies(manifest));
  return problems;
}

/**
 * Whether a published manifest names the root's repository and its own folder in it, as npm
 * links a package to its source (`repository.directory`).
 * @param {Record<string, any>} manifest
 * @param {string} directory the package's folder, relative to the root (`packages/wire`)
 * @param {Record<string, any> | undefined} repository the root manifest's `repository`
 * @returns {string[]}
 */
export function repositoryProblems(manifest, directory, repository) {
  if (!repository?.url) return ['the root package.json has no "repository" to name'];
  const { type, url, directory: folder } = manifest.repository ?? {};
  if (type === repository.type && url === repository.url && folder === directory) return [];
  return [
    `"repository" must be ${JSON.stringify({ type: repository.type, url: repository.url, directory })} (the root's, with this folder)`,
  ];
}

/**
 * Dependencies a published manifest pins to one version: `catalog:` and `workspace:*`
 * become exact versions in the tarball, so a user with another compatible copy gets two.
 * @param {Record<string, any>} manifest
 * @returns {string[]}
 */
export function pinnedDependencies(manifest) {
  const problems = [];
  for (const field of ['dependencies', 'peerDependencies']) {
    for (const [name, spec] of Object.entries(manifest[field] ?? {})) {
      const exact =
        spec.startsWith('catalog:') ||
        spec === 'workspace:*' ||
        /^=?v?\d+\.\d+\.\d+(-\S*)?$/.test(spec);
      if (exact) {
        problems.push(
          `${field} pins "${name}" to one version ("${spec}"): a user with another compatible copy gets two; give a range (e.g. "^4.1.8", "workspace:^")`,
        );
      }
    }
  }
  return problems;
}

/**
 * Source maps of `dir/dist` whose sources are not inside them: the tarball ships dist only,
 * so a stack trace or a failing assertion would point into a file the user does not have.
 * @param {string} dir
 * @returns {string[]}
 */
export function sourceMapProblems(dir) {
  const dist = path.join(dir, 'dist');
  if (!existsSync(dist)) return [];
  const problems = [];
  for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.map')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const map = JSON.parse(readFileSync(file, 'utf8'));
    const complete =
      Array.isArray(map.sourcesContent) &&
      map.sourcesContent.length === map.sources?.length &&
      map.sourcesContent.every((text) => typeof text === 'string');
    if (!complete) {
      problems.push(
        `${path.relative(dir, file)} points to sources that are not shipped: build with "inlineSources"`,
      );
    }
  }
  return problems;
}

async function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`usage: check-packages [--root DIR]

Runs publint (npm's view of what would be packed) and the house rules on every
workspace that is not private, then packs them and checks their types as an ESM user's
TypeScript resolves them (@arethetypeswrong/core, its esm-only profile). Build first:
the checks read dist/. Exit code 1 on any problem.`);
    return 0;
  }
  const root = rootOf(argv);
  const { repository } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  let problems = 0;
  let checked = 0;
  for (const dir of workspacesOf(root)) {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    if (manifest.private) continue;
    checked++;
    const lines = [
      ...houseRules(manifest, dir),
      ...repositoryProblems(manifest, path.relative(root, dir), repository),
    ];
    const { messages, pkg } = await publint({
      pkgDir: dir,
      level: 'warning',
      strict: true,
      pack: 'npm',
    });
    for (const message of messages) lines.push(`${message.type}: ${formatMessage(message, pkg)}`);
    for (const line of lines) console.error(`${manifest.name}: ${line}`);
    problems += lines.length;
  }
  const packs = mkdtempSync(path.join(tmpdir(), 'check-packages-'));
  try {
    const types = await typeProblems(await packLocal(root, packs));
    for (const line of types) console.error(line);
    problems += types.length;
  } finally {
    rmSync(packs, { recursive: true, force: true });
  }
  if (problems) {
    console.error(`check-packages: ${problems} problem(s)`);
    return 1;
  }
  console.log(`check-packages: ${checked} packages publishable, their types right for ESM (attw)`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2));
}

#!/usr/bin/env node
// Packs every published workspace into one folder (`packed/` at the root), the way a user
// installs them before they are on npm: pnpm pack rewrites `workspace:` and `catalog:` to
// versions, and each tarball is named without its version (`x-continuation.tgz`), so that
// the install line of a README does not change when a changeset bumps the version.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rootOf, workspacesOf } from './check-imports.mjs';
import { run } from './run.mjs';

/** The environment variable a README's install line reads the folder from. */
export const PACKED_VARIABLE = 'X_PACKED';

/**
 * The published workspaces (not "private"), by package name.
 * @param {string} root
 * @returns {Map<string, { dir: string, manifest: Record<string, any> }>}
 */
export function publishedPackages(root) {
  const published = new Map();
  for (const dir of workspacesOf(root)) {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    if (!manifest.private) published.set(manifest.name, { dir, manifest });
  }
  return published;
}

/**
 * The file name of a package's tarball in the packed folder: `@x/continuation` is
 * `x-continuation.tgz`.
 * @param {string} name
 */
export function tarballName(name) {
  return `${name.replace(/^@/, '').replace('/', '-')}.tgz`;
}

/**
 * The published packages a user must install together so that npm asks the registry for none
 * of ours: `names` in their order, then, sorted, the published packages they depend on
 * transitively (peers too: npm installs those itself).
 * @param {string[]} names
 * @param {Map<string, { manifest: Record<string, any> }>} published
 * @returns {string[]}
 */
export function installClosure(names, published) {
  const found = new Set();
  const visit = (name) => {
    const entry = published.get(name);
    if (!entry || found.has(name)) return;
    found.add(name);
    const { dependencies, peerDependencies, peerDependenciesMeta } = entry.manifest;
    for (const dependency of Object.keys({ ...dependencies, ...peerDependencies })) {
      if (!peerDependenciesMeta?.[dependency]?.optional) visit(dependency);
    }
  };
  for (const name of names) visit(name);
  const named = names.filter((name) => published.has(name));
  return [...named, ...[...found].filter((name) => !named.includes(name)).sort()];
}

/**
 * The one `npm install` line that installs `names` and what they need of ours, from the
 * packed folder named by {@link PACKED_VARIABLE}.
 * @param {string[]} names
 * @param {Map<string, { manifest: Record<string, any> }>} published
 */
export function packedInstallLine(names, published) {
  const paths = installClosure(names, published).map(
    (name) => `"$${PACKED_VARIABLE}"/${tarballName(name)}`,
  );
  return `npm install ${paths.join(' ')}`;
}

/**
 * Packs every published workspace of `root` (built first) into `folder`, replacing the
 * tarballs a previous run left there. Resolves to the tarballs' paths by package name.
 * @param {string} root
 * @param {string} folder
 * @returns {Promise<Map<string, string>>}
 */
export async function packLocal(root, folder) {
  const published = publishedPackages(root);
  const pnpm = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).packageManager;
  mkdirSync(folder, { recursive: true });
  // pnpm names a tarball with its version: it packs beside the folder, then each is renamed.
  const staging = mkdtempSync(path.join(folder, '.staging-'));
  try {
    const filters = [...published.keys()].flatMap((name) => ['--filter', name]);
    const packed = await run(
      'npx',
      ['--yes', pnpm ?? 'pnpm', '-r', ...filters, 'pack', '--pack-destination', staging, '--json'],
      { cwd: root, timeout: 300_000 },
    );
    if (!packed.ok) throw new Error(`pnpm pack failed:\n${packed.output}`);
    const results = JSON.parse(packed.output.slice(packed.output.indexOf('[')));
    for (const entry of readdirSync(folder)) {
      if (entry.endsWith('.tgz')) rmSync(path.join(folder, entry));
    }
    const tarballs = new Map();
    for (const { name, filename } of results) {
      const target = path.join(folder, tarballName(name));
      renameSync(filename, target);
      tarballs.set(name, target);
    }
    return new Map([...tarballs].sort(([a], [b]) => a.localeCompare(b)));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

async function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`usage: pack-local [--root DIR] [--out DIR]

Packs every published package (pnpm pack: workspace: and catalog: become versions) into
one folder, packed/ at the root unless --out says otherwise, each tarball named without
its version (x-continuation.tgz). A package README's "Before the packages are published"
line installs from there, with ${PACKED_VARIABLE} set to the folder. Build first.`);
    return 0;
  }
  const root = rootOf(argv);
  const out = argv.indexOf('--out');
  const folder = path.resolve(out >= 0 ? argv[out + 1] : path.join(root, 'packed'));
  const tarballs = await packLocal(root, folder);
  console.log(`pack-local: ${tarballs.size} packages packed into ${folder}`);
  for (const file of tarballs.values()) console.log(`  ${path.basename(file)}`);
  console.log(`For a README's install line: export ${PACKED_VARIABLE}=${folder}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2));
}

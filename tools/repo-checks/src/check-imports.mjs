#!/usr/bin/env node
// Checks every workspace's imports against DESIGN.md's rules:
//  - a sibling @x/* package may be imported only where the table allows it;
//  - every third-party import is declared in that workspace's package.json
//    (dependencies/peerDependencies for shipped code, devDependencies too for tests);
//  - relative imports stay inside their workspace and form no cycle, type-only ones included;
//  - no file outside a workspace's web/ (the page) imports one inside it;
//  - files that two core packages keep as one implementation (MIRRORED) stay byte-identical;
//  - the runner's folders import only the layers below their own (RUNNER_LAYERS).
// Exits 1 and lists each violation, so CI fails on any.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const GROUPS = ['packages', 'apps', 'tools', 'examples'];
const SOURCE = /\.(?:[mc]?ts|tsx|[mc]?js)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', '.turbo', 'coverage', 'drizzle']);
const builtins = new Set(builtinModules);

// What the unattended executive builds on: the stores, the questions, the wire and policy.
const EXECUTIVE_IMPORTS = [
  '@x/continuation',
  '@x/continuation-postgres',
  '@x/askuser',
  '@x/session',
  '@x/session-postgres',
  '@x/wire',
  '@x/postgres-kit',
  '@x/policy',
];

/**
 * DESIGN.md's table: the @x/* packages a workspace may import, or '*' for any.
 * @param {string} name package name
 * @returns {string[] | '*' | undefined} undefined for an @x package the table does not know
 */
export function allowedSiblings(name) {
  switch (name) {
    case '@x/wire':
    case '@x/postgres-kit':
    case '@x/policy':
      return [];
    case '@x/askuser':
      return ['@x/postgres-kit'];
    case '@x/continuation':
    case '@x/session':
      return ['@x/wire'];
    case '@x/mcp':
      return ['@x/askuser'];
    case '@x/notify':
      return ['@x/askuser', '@x/postgres-kit'];
    case '@x/executive':
      return EXECUTIVE_IMPORTS;
    // A framework adapter: @x/executive and what the executive may import.
    case '@x/ai-sdk':
    case '@x/langgraph':
    case '@x/openai-agents':
      return ['@x/executive', ...EXECUTIVE_IMPORTS];
    case '@x/approval-center':
      return ['@x/executive', '@x/askuser', '@x/notify', '@x/postgres-kit', '@x/wire'];
  }
  // A store adapter implements one core package's interface: that package and @x/wire,
  // and the shared PostgreSQL plumbing.
  const adapter = /^@x\/(continuation|session|askuser)-[a-z0-9-]+$/.exec(name);
  if (adapter) return [`@x/${adapter[1]}`, '@x/wire', '@x/postgres-kit'];
  if (name.startsWith('@x/')) return undefined;
  return '*';
}

/**
 * Files kept as one implementation in two packages that may not import each other (the
 * core packages depend on nothing of ours but @x/wire): each pair must stay byte-identical.
 */
export const MIRRORED = [
  [
    'packages/continuation/src/testing/suite-plumbing.ts',
    'packages/session/src/testing/suite-plumbing.ts',
  ],
  [
    'packages/continuation/src/testing/child-store.js',
    'packages/session/src/testing/child-store.js',
  ],
  ['packages/continuation/src/file/durable.ts', 'packages/session/src/file/durable.ts'],
  ['packages/continuation/src/safe-id.ts', 'packages/session/src/safe-id.ts'],
];

/**
 * The pairs of {@link MIRRORED} that differ under `root` (a missing file counts as different).
 * @param {string} root
 * @param {string[][]} [pairs]
 * @returns {string[]}
 */
export function checkMirrors(root, pairs = MIRRORED) {
  const violations = [];
  for (const [a, b] of pairs) {
    const read = (file) => {
      const full = path.join(root, file);
      return existsSync(full) ? readFileSync(full, 'utf8') : undefined;
    };
    const left = read(a);
    const right = read(b);
    if (left === undefined || right === undefined || left !== right) {
      violations.push(
        `${b}: must stay byte-identical to ${a} (one implementation in two packages); copy the change over`,
      );
    }
  }
  return violations;
}

/**
 * The runner's layers, top to bottom (DESIGN.md's "The runner after the cut"): a file may
 * import its own layer and the layers below it, never one above. A layer is a list of
 * folders (`name/`) and files of `src`; a folder or file that no layer names is refused.
 */
export const RUNNER_LAYERS = {
  src: 'apps/runner/src',
  layers: [
    ['cli.ts'],
    ['commands/'],
    ['chat/', 'serve/'],
    ['demo/', 'model/'],
    ['executive/'],
    ['notify/'],
    ['storage/'],
    ['telemetry/'],
    ['terminal/', 'config/'],
    ['failure.ts'],
    ['errors.ts'],
  ],
  // Imports against the order in the folders that are moving into packages (@x/executive,
  // @x/notify, the run queue's stores) now: each is one file to one file, so a new one still
  // fails; delete each line when its move lands (a line that matches nothing fails too).
  allowed: [
    'executive/record-answer.ts -> demo/tools.ts',
    'executive/resume.ts -> demo/tools.ts',
    'executive/start.ts -> demo/tools.ts',
  ],
};

/**
 * The imports of the runner's `src` against {@link RUNNER_LAYERS}' order, one line each
 * naming the file, its line and both layers; and the allowances that no import uses.
 * @param {string} root
 * @param {typeof RUNNER_LAYERS} [order]
 * @returns {string[]}
 */
export function checkLayers(root, order = RUNNER_LAYERS) {
  const src = path.join(root, order.src);
  if (!existsSync(src)) return [];
  const unitOf = (relative) => {
    const [head, ...rest] = relative.split(path.sep);
    return rest.length ? `${head}/` : head;
  };
  const layerOf = (unit) => order.layers.findIndex((layer) => layer.includes(unit));
  const name = (at) => order.layers[at].join(' ');
  const unused = new Set(order.allowed);
  const violations = [];
  for (const file of walk(src)) {
    const from = path.relative(src, file);
    const fromLayer = layerOf(unitOf(from));
    if (fromLayer < 0) {
      violations.push(
        `${order.src}/${from}: ${unitOf(from)} is in none of the runner's layers; add it to RUNNER_LAYERS in tools/repo-checks/src/check-imports.mjs`,
      );
      continue;
    }
    for (const { specifier, line } of importsOf(readFileSync(file, 'utf8'))) {
      const target = specifier.startsWith('.') ? resolveRelative(file, specifier) : undefined;
      if (!target || path.relative(src, target).startsWith('..')) continue;
      const to = path.relative(src, target);
      const toLayer = layerOf(unitOf(to));
      if (toLayer < 0 || toLayer >= fromLayer) continue;
      const edge = `${from} -> ${to}`.split(path.sep).join('/');
      if (unused.delete(edge) || order.allowed.includes(edge)) continue;
      violations.push(
        `${order.src}/${from}:${line}: imports ${to}, against the runner's layers: ${unitOf(from)} (layer ${fromLayer + 1}: ${name(fromLayer)}) may not import ${unitOf(to)} (layer ${toLayer + 1}: ${name(toLayer)}), which is above it`,
      );
    }
  }
  for (const edge of unused) {
    violations.push(
      `${order.src}: the allowance "${edge}" in RUNNER_LAYERS matches no import any more; delete it`,
    );
  }
  return violations;
}

/**
 * Reduces source to its code: comments and template-literal text are blanked (line
 * breaks kept) and each string literal becomes a numbered placeholder, so that only real
 * import statements are seen, not examples in JSDoc or source text held in strings.
 * @param {string} source
 * @returns {{ code: string, strings: string[] }}
 */
export function codeOnly(source) {
  let code = '';
  const strings = [];
  let i = 0;
  const blank = (s) => s.replace(/[^\n]/g, ' ');
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      const stop = end === -1 ? source.length : end;
      code += blank(source.slice(i, stop));
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end === -1 ? source.length : end + 2;
      code += blank(source.slice(i, stop));
      i = stop;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== '\n')
        j += source[j] === '\\' ? 2 : 1;
      code += `'\u0000${strings.length}'`;
      strings.push(source.slice(i + 1, j));
      i = j + 1;
    } else if (c === '`') {
      let j = i + 1;
      while (j < source.length && source[j] !== '`') j += source[j] === '\\' ? 2 : 1;
      code += `\`${blank(source.slice(i + 1, j))}\``;
      i = j + 1;
    } else {
      code += c;
      i++;
    }
  }
  return { code, strings };
}

const STRING = "'\\u0000(\\d+)'";
const IMPORT_PATTERNS = [
  new RegExp(`\\b(?:import|export)\\s+[^'\`;]*?\\bfrom\\s*${STRING}`, 'g'),
  new RegExp(`\\bimport\\s*${STRING}`, 'g'),
  new RegExp(`\\bimport\\s*\\(\\s*${STRING}\\s*\\)`, 'g'),
];

/**
 * The module specifiers a source file imports or re-exports, type-only and dynamic ones
 * included: a cycle through types alone still ties the files together.
 * @param {string} source
 * @returns {{ specifier: string, line: number }[]}
 */
export function importsOf(source) {
  const { code, strings } = codeOnly(source);
  const found = [];
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of code.matchAll(pattern)) {
      const specifier = strings[Number(match[1])];
      const line = code.slice(0, match.index).split('\n').length;
      found.push({ specifier, line });
    }
  }
  return found;
}

/** The package a bare specifier names: `@scope/name` or `name`. */
export function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** A Node built-in module (`node:fs`, `fs`). */
export function isBuiltin(specifier) {
  return specifier.startsWith('node:') || builtins.has(packageOf(specifier));
}

/** Tests, benchmarks, fixtures and config files may also use devDependencies. */
export function isDevFile(relative) {
  const parts = relative.split(path.sep);
  const base = parts[parts.length - 1];
  return (
    /\.(test|bench|spec)\.[mc]?[jt]sx?$/.test(base) ||
    /\.config\.[mc]?[jt]s$/.test(base) ||
    parts.some((p) => ['test', 'tests', 'bench', 'fixtures', '__fixtures__', 'e2e'].includes(p))
  );
}

function walk(dir, files = []) {
  // Sorted, so that a cycle is reported from the same file on every file system.
  const entries = readdirSync(dir, { withFileTypes: true });
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.'))
        walk(path.join(dir, entry.name), files);
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      files.push(path.join(dir, entry.name));
    }
  }
  return files;
}

function resolveRelative(from, specifier) {
  const target = path.resolve(path.dirname(from), specifier);
  const stem = target.replace(/\.[mc]?js$/, '');
  const candidates = [
    target,
    `${stem}.ts`,
    `${stem}.tsx`,
    `${stem}.mts`,
    `${stem}.js`,
    `${stem}.mjs`,
    path.join(target, 'index.ts'),
    path.join(target, 'index.js'),
  ];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/**
 * Whether `file`, outside its workspace's `web/` (the page, built for the browser), imports
 * `target` inside it: the server and the page share code only through a package.
 * @param {string} dir the workspace
 * @param {string} file the importing file
 * @param {string} target the imported file
 * @returns {boolean}
 */
export function intoWeb(dir, file, target) {
  const web = path.join(dir, 'web');
  const inside = (f) => !path.relative(web, f).startsWith('..');
  return inside(target) && !inside(file);
}

/** Every cycle among the given import edges, each as a list of files. */
export function findCycles(edges) {
  const cycles = [];
  const state = new Map();
  const stack = [];
  const visit = (node) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of edges.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

/**
 * The repository a check runs on: `--root DIR` from `argv`, else this checkout.
 * @param {string[]} argv
 * @returns {string}
 */
export function rootOf(argv) {
  const at = argv.indexOf('--root');
  return at >= 0
    ? path.resolve(argv[at + 1] ?? '.')
    : path.resolve(fileURLToPath(import.meta.url), '../../../..');
}

/** The workspaces under `root`: folders of packages/, apps/, tools/, examples/ with a package.json. */
export function workspacesOf(root) {
  return GROUPS.flatMap((group) => {
    const dir = path.join(root, group);
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .map((name) => path.join(dir, name))
      .filter((d) => existsSync(path.join(d, 'package.json')));
  });
}

/**
 * Checks the monorepo at `root`.
 * @param {string} root
 * @returns {string[]} one line per violation; empty when all is well
 */
export function checkImports(root) {
  const violations = [];
  for (const dir of workspacesOf(root)) {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const name = manifest.name;
    const shipped = new Set([
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
    ]);
    const dev = new Set([...shipped, ...Object.keys(manifest.devDependencies ?? {})]);
    const allowed = allowedSiblings(name);
    const where = path.relative(root, dir);
    if (allowed === undefined) {
      violations.push(`${where}: ${name} is not in DESIGN.md's import table; add it there first`);
      continue;
    }
    const edges = new Map();
    for (const file of walk(dir)) {
      const relative = path.relative(dir, file);
      const at = (line) => `${path.relative(root, file)}:${line}`;
      const declared = isDevFile(relative) ? dev : shipped;
      const targets = [];
      for (const { specifier, line } of importsOf(readFileSync(file, 'utf8'))) {
        if (specifier.startsWith('.')) {
          const target = resolveRelative(file, specifier);
          if (!target) {
            violations.push(`${at(line)}: "${specifier}" does not resolve to a file`);
          } else if (path.relative(dir, target).startsWith('..')) {
            violations.push(
              `${at(line)}: "${specifier}" reaches outside ${where}; import the package instead`,
            );
          } else if (intoWeb(dir, file, target)) {
            violations.push(
              `${at(line)}: "${specifier}" reaches into the page's folder web/ from the server; import what both share from a package (the API contract: @x/approval-center)`,
            );
          } else {
            targets.push(target);
          }
          continue;
        }
        if (isBuiltin(specifier)) continue;
        const pkg = packageOf(specifier);
        if (pkg === name) continue;
        if (pkg.startsWith('@x/') && allowed !== '*' && !allowed.includes(pkg)) {
          const may = allowed.length ? allowed.join(', ') : 'nothing of ours';
          violations.push(
            `${at(line)}: ${name} imports ${pkg}, which DESIGN.md does not allow (${name} may import: ${may})`,
          );
          continue;
        }
        if (!declared.has(pkg)) {
          const kind = isDevFile(relative) ? 'package.json' : 'dependencies or peerDependencies';
          violations.push(
            `${at(line)}: ${name} imports "${pkg}", which its ${kind} does not declare`,
          );
        }
      }
      edges.set(file, targets);
    }
    for (const cycle of findCycles(edges)) {
      violations.push(
        `${where}: import cycle ${cycle.map((f) => path.relative(dir, f)).join(' -> ')}`,
      );
    }
  }
  return violations;
}

function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`usage: check-imports [--root DIR]

Checks the imports of every workspace (packages/*, apps/*, tools/*, examples/*) under DIR
(default: the repository root): DESIGN.md's rules between @x/* packages, that every
import is declared in the workspace's package.json, and that relative imports stay
inside the workspace without cycles (type-only imports count), and that the runner's files
import no layer above their own (RUNNER_LAYERS). Exit code 0 when clean, 1 on any violation.`);
    return 0;
  }
  const root = rootOf(argv);
  const violations = [...checkImports(root), ...checkMirrors(root), ...checkLayers(root)];
  for (const v of violations) console.error(v);
  if (violations.length) {
    console.error(`check-imports: ${violations.length} violation(s)`);
    return 1;
  }
  console.log(`check-imports: ${workspacesOf(root).length} workspaces clean`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = main(process.argv.slice(2));
}

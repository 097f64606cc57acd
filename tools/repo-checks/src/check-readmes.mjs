#!/usr/bin/env node
// Checks the published packages' READMEs as a user reads them off npm: each starts with the
// `npm install` line its examples need, and every TypeScript code block compiles and runs in a
// plain npm project holding the packed tarballs plus exactly those lines' packages (at the
// workspace catalog's versions), never against the workspace. A block's fence says what it
// is: ```ts is a program (compiled, then run in an empty folder), ```ts test is a vitest file
// (compiled and run), ```ts server is a program that needs PostgreSQL (run twice against one
// throwaway database, DATABASE_URL; skipped without a server, failed in CI), ```ts compile
// is a fragment that needs something outside (a model, a key): compiled only. A ```js file
// PATH block is a file the tests need, written at PATH beside them. An `…Error` the prose
// names in backticks must exist: ours, JavaScript's, or in a dependency's types.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, serverForTests } from '@internal/pg-test';
import { importsOf, isBuiltin, packageOf, rootOf, workspacesOf } from './check-imports.mjs';

const KINDS = new Set(['program', 'test', 'server', 'compile']);
// What every TypeScript user has: the compiler is the workspace's, the Node types the project's.
const TOOLING = ['@types/node'];

/**
 * The TypeScript blocks of a README, each with its kind and the line its code starts on.
 * @param {string} markdown
 * @returns {{ kind: string, code: string, line: number }[]}
 */
export function codeBlocks(markdown) {
  return fences(markdown)
    .filter((f) => f.lang === 'ts' || f.lang === 'typescript')
    .map(({ flag, code, line }) => ({ kind: flag === '' ? 'program' : flag, code, line }));
}

/**
 * The ```js file PATH blocks of a README: files its test blocks use (fixtures).
 * @param {string} markdown
 * @returns {{ file: string, code: string, line: number }[]}
 */
export function fileBlocks(markdown) {
  return fences(markdown)
    .filter((f) => (f.lang === 'js' || f.lang === 'ts') && f.flag.startsWith('file '))
    .map(({ flag, code, line }) => ({ file: flag.slice('file '.length).trim(), code, line }));
}

/**
 * The packages a README's install block names. The README must start with it: its first
 * code block, before the first `##` section, only `npm install` lines (`-D` for dev ones).
 * @param {string} markdown
 * @returns {{ packages: string[], problem?: undefined } | { packages?: undefined, problem: string }}
 */
export function installLine(markdown) {
  const [first] = fences(markdown);
  const section = markdown.search(/^## /m);
  if (
    !first ||
    !['sh', 'bash', 'shell'].includes(first.lang) ||
    (section >= 0 && first.index > section)
  ) {
    return {
      problem:
        'does not start with its install line (a ```sh block of `npm install ...` before the first section)',
    };
  }
  const packages = [];
  for (const line of first.code.split('\n').map((l) => l.replace(/#.*/, '').trim())) {
    if (line === '') continue;
    const words = line.split(/\s+/);
    if (words[0] !== 'npm' || !['install', 'i'].includes(words[1] ?? '')) {
      return { problem: `install block line "${line}" is not an \`npm install\` line` };
    }
    for (const word of words.slice(2)) {
      if (word === '-D' || word === '--save-dev') continue;
      if (word.startsWith('-') || word.lastIndexOf('@') > 0) {
        return {
          problem: `install line names "${word}": name packages only (the check pins the catalog's version)`,
        };
      }
      packages.push(word);
    }
  }
  if (packages.length === 0) return { problem: 'install block names no package' };
  return { packages };
}

/**
 * The imports of a README's code blocks from packages its install line does not name, with
 * the README line they are on: a user who ran that line would not have them.
 * @param {string} markdown
 * @param {string[]} packages
 * @returns {{ specifier: string, line: number }[]}
 */
export function unnamedImports(markdown, packages) {
  const found = [];
  for (const { code, line } of [...codeBlocks(markdown), ...fileBlocks(markdown)]) {
    for (const { specifier, line: at } of importsOf(code)) {
      if (specifier.startsWith('.') || isBuiltin(specifier)) continue;
      if (!packages.includes(packageOf(specifier))) found.push({ specifier, line: line + at - 1 });
    }
  }
  return found;
}

/**
 * The `…Error` names a README gives in backticks that `known` does not know, with their line:
 * a user who looks for such a class finds nothing (a renamed error the prose kept).
 * @param {string} markdown
 * @param {(name: string) => boolean} known
 * @returns {{ name: string, line: number }[]}
 */
export function unknownErrorNames(markdown, known) {
  const found = [];
  for (const match of markdown.matchAll(/`([A-Z][A-Za-z0-9]*Error)\b/g)) {
    const name = match[1];
    if (!known(name)) found.push({ name, line: markdown.slice(0, match.index).split('\n').length });
  }
  return found;
}

/** The names the published packages' sources export (declarations, not re-exports). */
function exportedNames(dirs) {
  const names = new Set();
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const at = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(at);
      else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
        const code = readFileSync(at, 'utf8');
        const declared =
          /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:class|const|function|interface|type)\s+(\w+)/gm;
        for (const match of code.matchAll(declared)) names.add(match[1]);
      }
    }
  };
  for (const dir of dirs) if (existsSync(path.join(dir, 'src'))) walk(path.join(dir, 'src'));
  return names;
}

/** Whether `name` is in the type declarations of a package that `dir`'s package can import. */
function declaredByDependency(dir, packages, name) {
  const word = new RegExp(`\\b${name}\\b`);
  const search = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const at = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && search(at)) return true;
      } else if (/\.d\.[cm]?ts$/.test(entry.name) && word.test(readFileSync(at, 'utf8'))) {
        return true;
      }
    }
    return false;
  };
  return packages.some((pkg) => {
    const folder = path.join(dir, 'node_modules', pkg);
    return existsSync(folder) && search(folder);
  });
}

/** Every fenced block with its language, info string, code, offset and first code line. */
function fences(markdown) {
  const fence = /^```(\w*)([^\n]*)\n([\s\S]*?)^```/gm;
  return [...markdown.matchAll(fence)].map((match) => ({
    lang: match[1],
    flag: match[2].trim(),
    code: match[3],
    index: match.index,
    line: markdown.slice(0, match.index).split('\n').length + 1,
  }));
}

/** The versions the workspace pins (pnpm-workspace.yaml's `catalog:`), by package name. */
export function catalogOf(yaml) {
  const versions = new Map();
  const start = yaml.search(/^catalog:\s*$/m);
  if (start < 0) return versions;
  for (const line of yaml.slice(start).split('\n').slice(1)) {
    if (!/^\s/.test(line) && line.trim() !== '') break;
    const entry = /^\s+"?([^":\s]+)"?:\s*(\S+)/.exec(line);
    if (entry) versions.set(entry[1], entry[2]);
  }
  return versions;
}

/** Runs a command; resolves to its exit code and output (killed after `timeout` ms). */
function run(command, args, { cwd, env = {}, timeout = 120_000 }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', (error) => {
      output += `${command}: ${error.message}`;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ ok: code === 0, output: signal ? `${output}\n(killed: ${signal})` : output });
    });
  });
}

/** Seconds since this check started, for the progress lines. */
function seconds() {
  return `${(performance.now() / 1000).toFixed(1)} s`;
}

/** Runs `tasks` with at most `limit` at a time. */
async function pool(tasks, limit) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** The first folder above `dir` with a node_modules, whose packages the project would see. */
function nodeModulesAbove(dir) {
  for (let at = path.dirname(dir); ; at = path.dirname(at)) {
    if (existsSync(path.join(at, 'node_modules'))) return at;
    if (path.dirname(at) === at) return undefined;
  }
}

/**
 * Reads every published package's README into the examples to write, or problems.
 * @param {string} root
 * @param {Map<string, string>} catalog
 */
export function readReadmes(root, catalog) {
  const problems = [];
  const readmes = [];
  const published = new Map();
  for (const dir of workspacesOf(root)) {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    if (!manifest.private) published.set(manifest.name, dir);
  }
  const ours = exportedNames(published.values());
  for (const [name, dir] of published) {
    const readme = path.join(dir, 'README.md');
    const where = path.relative(root, readme);
    const markdown = readFileSync(readme, 'utf8');
    const install = installLine(markdown);
    if (install.problem) {
      problems.push(`${where}: ${install.problem}`);
      continue;
    }
    for (const pkg of install.packages) {
      if (!published.has(pkg) && !catalog.has(pkg)) {
        problems.push(
          `${where}: installs "${pkg}", which is neither one of ours nor in pnpm-workspace.yaml's catalog (pin it there)`,
        );
      }
    }
    const blocks = [];
    codeBlocks(markdown).forEach((block, i) => {
      const at = `${where}:${block.line}`;
      if (!KINDS.has(block.kind)) {
        problems.push(
          `${at}: unknown block kind "${block.kind}" (use ts, ts test, ts server or ts compile)`,
        );
        return;
      }
      blocks.push({ ...block, where: at, name: `example-${i + 1}` });
    });
    const files = fileBlocks(markdown);
    for (const { specifier, line } of unnamedImports(markdown, install.packages)) {
      problems.push(
        `${where}:${line}: imports "${specifier}", which its install line does not name`,
      );
    }
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const dependencies = [
      ...install.packages,
      ...Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }),
    ];
    const known = (errorName) =>
      ours.has(errorName) ||
      errorName in globalThis ||
      declaredByDependency(dir, dependencies, errorName);
    for (const { name: errorName, line } of unknownErrorNames(markdown, known)) {
      problems.push(
        `${where}:${line}: names \`${errorName}\`, which neither our packages, JavaScript nor its dependencies export`,
      );
    }
    readmes.push({ name, dir, where, packages: install.packages, blocks, files });
  }
  return { problems, readmes, published };
}

async function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`usage: check-readmes [--root DIR]

Checks every published package's README as a user installs it: it starts with an
\`npm install\` line, and every \`\`\`ts block compiles (tsc, strict, NodeNext) and runs in
one plain npm project under the system temp folder holding the packed tarballs (pnpm
pack) and the install lines' packages at the catalog's versions (npm's cache is reused,
and the project's third-party packages are kept for the next run; the registry must be
reachable). \`ts server\` blocks run twice against one throwaway
database. A backticked \`…Error\` name must be exported by our packages, JavaScript or
a dependency. Build first. Exit code 1 on any failure.`);
    return 0;
  }
  const root = rootOf(argv);
  const rootManifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const catalog = catalogOf(readFileSync(path.join(root, 'pnpm-workspace.yaml'), 'utf8'));
  const { problems, readmes, published } = readReadmes(root, catalog);
  const examples = readmes.flatMap((r) => r.blocks);
  if (problems.length === 0) {
    // Outside the repository (inside, it would also see the workspace's node_modules), one per
    // checkout. Its third-party packages are kept between runs: npm then only checks them.
    const key = createHash('sha256').update(root).digest('hex').slice(0, 12);
    const project = path.join(tmpdir(), `x-readme-examples-${key}`);
    const clean = () => {
      mkdirSync(project, { recursive: true });
      for (const entry of readdirSync(project)) {
        if (entry !== 'node_modules')
          rmSync(path.join(project, entry), { recursive: true, force: true });
      }
      // Ours are packed afresh each run: npm must not keep a copy of an older build.
      for (const ours of ['node_modules/@x', 'node_modules/.package-lock.json']) {
        rmSync(path.join(project, ours), { recursive: true, force: true });
      }
    };
    clean();
    try {
      problems.push(
        ...(await checkInProject(root, project, rootManifest, catalog, readmes, published)),
      );
    } finally {
      clean();
    }
  }
  for (const problem of problems) console.error(problem);
  if (problems.length) {
    console.error(`check-readmes: ${problems.length} problem(s)`);
    return 1;
  }
  console.log(
    `check-readmes: ${readmes.length} READMEs start with their install line; their ${examples.length} code blocks compile and run from the packed packages (${seconds()})`,
  );
  return 0;
}

/** Packs, installs, compiles and runs the READMEs' examples in `project`; returns problems. */
async function checkInProject(root, project, rootManifest, catalog, readmes, published) {
  const above = nodeModulesAbove(project);
  if (above)
    return [
      `the examples' project ${project} would see ${above}/node_modules: set TMPDIR elsewhere`,
    ];
  const temp = path.join(project, 'tmp');
  const packs = path.join(project, 'packs');
  mkdirSync(temp);
  mkdirSync(packs);
  const pnpm = rootManifest.packageManager ?? 'pnpm';
  // pnpm pack rewrites workspace: and catalog: to the versions a user gets.
  const filters = [...published.keys()].flatMap((name) => ['--filter', name]);
  const packed = await run(
    'npx',
    ['--yes', pnpm, '-r', ...filters, 'pack', '--pack-destination', packs, '--json'],
    { cwd: root },
  );
  if (!packed.ok) return [`pnpm pack failed:\n${packed.output}`];
  const tarballs = JSON.parse(packed.output.slice(packed.output.indexOf('['))).map(
    (p) => p.filename,
  );
  const wanted = new Set([...TOOLING, ...readmes.flatMap((r) => r.packages)]);
  const specs = [...wanted]
    .filter((pkg) => !published.has(pkg))
    .map((pkg) => `${pkg}@${catalog.get(pkg)}`);
  if (specs.some((s) => s.endsWith('@undefined'))) {
    return [
      `the catalog has no version for ${specs.filter((s) => s.endsWith('@undefined')).join(', ')}`,
    ];
  }
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'readme-examples', private: true, type: 'module' }),
  );
  const installed = await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      ...tarballs,
      ...specs,
    ],
    { cwd: project, env: { TMPDIR: temp }, timeout: 300_000 },
  );
  if (!installed.ok)
    return [
      `npm install of the packed packages and the install lines failed:\n${installed.output}`,
    ];
  console.log(`check-readmes: packed and installed in ${seconds()}`);

  // Each README in a folder of its own, so their fixtures cannot collide.
  const sources = [];
  for (const readme of readmes) {
    const folder = path.join(project, readme.name.replace(/^@/, '').replace('/', '-'));
    mkdirSync(folder);
    readme.folder = folder;
    for (const block of readme.blocks) {
      block.file = path.join(folder, `${block.name}${block.kind === 'test' ? '.test' : ''}.ts`);
      writeFileSync(block.file, `// ${block.where}\n${block.code}`);
      sources.push(block.file);
    }
    for (const fixture of readme.files) {
      const file = path.join(folder, fixture.file);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, fixture.code);
    }
  }
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        types: ['node'],
        strict: true,
        skipLibCheck: true,
        rootDir: '.',
        outDir: 'out',
      },
      files: sources.map((f) => path.relative(project, f)),
    }),
  );
  const tsc = path.join(
    path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
    'bin/tsc',
  );
  const compiled = spawnSync(process.execPath, [tsc, '-p', project], {
    encoding: 'utf8',
    cwd: project,
  });
  if (compiled.status !== 0) {
    return [`README code does not compile:\n${compiled.stdout}${compiled.stderr}`];
  }
  const problems = [];
  const examples = readmes.flatMap((r) => r.blocks);
  const programs = examples
    .filter((e) => e.kind === 'program' || e.kind === 'server')
    // PGlite's initdb takes seconds: those programs start first, the quick ones fill in.
    .sort((a, b) => Number(b.code.includes('PGlite(')) - Number(a.code.includes('PGlite(')));
  const server = programs.some((e) => e.kind === 'server') ? await serverForTests() : undefined;
  const runProgram = async (example, env) => {
    const cwd = mkdtempSync(path.join(temp, 'run-'));
    const scratch = path.join(cwd, 'tmp');
    mkdirSync(scratch);
    const js = path
      .join(project, 'out', path.relative(project, example.file))
      .replace(/\.ts$/, '.js');
    const result = await run(process.execPath, [js], {
      cwd,
      env: { ...env, TMPDIR: scratch },
      // Generous: in test:full this runs beside the slow tests, and PGlite's initdb shares the cores.
      timeout: 180_000,
    });
    rmSync(cwd, { recursive: true, force: true });
    return result;
  };
  const tasks = programs.map((example) => async () => {
    if (example.kind === 'program') {
      const { ok, output } = await runProgram(example, {});
      if (!ok) problems.push(`${example.where}: the program failed:\n${output}`);
      return;
    }
    if (server === undefined) {
      console.log(`check-readmes: ${example.where} skipped (no PostgreSQL server)`);
      return;
    }
    const database = await createTestDatabase(server);
    try {
      // Twice on one database: a user runs an example again, and it must still work.
      for (const round of ['first', 'second']) {
        const { ok, output } = await runProgram(example, { DATABASE_URL: database.url });
        if (!ok) {
          problems.push(`${example.where}: the program failed on its ${round} run:\n${output}`);
          break;
        }
      }
    } finally {
      await database.drop();
    }
  });
  const tests = examples.filter((e) => e.kind === 'test');
  const runTests = async () => {
    if (tests.length === 0) return;
    writeFileSync(
      path.join(project, 'vitest.config.mjs'),
      `export default { test: { include: ['*/*.test.ts'], testTimeout: 120000 } };\n`,
    );
    const vitest = path.join(project, 'node_modules/vitest/vitest.mjs');
    const { ok, output } = await run(process.execPath, [vitest, 'run'], {
      cwd: project,
      env: { TMPDIR: temp },
      timeout: 300_000,
    });
    if (!ok)
      problems.push(
        `the README test blocks (${tests.map((t) => t.where).join(', ')}) failed:\n${output}`,
      );
  };
  await Promise.all([runTests(), pool(tasks, Math.max(2, availableParallelism()))]);
  return problems;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2));
}

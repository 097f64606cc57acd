#!/usr/bin/env node
// Checks that every TypeScript code block in the published packages' READMEs compiles
// against the built packages and that those that are programs run. A block's fence says
// what it is: ```ts is a program (typechecked, then run in an empty folder), ```ts test is a
// vitest file (typechecked only), ```ts server is a program that needs PostgreSQL (run with
// DATABASE_URL set to a throwaway database; skipped without a server, failed in CI), and
// ```ts compile is a fragment that needs something outside (a model, a key): typechecked only.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, serverForTests } from '@internal/pg-test';
import { rootOf, workspacesOf } from './check-imports.mjs';

const EXAMPLES = '.readme-examples';
const KINDS = new Set(['program', 'test', 'server', 'compile']);

/**
 * The TypeScript blocks of a README, each with its kind and the line its code starts on.
 * @param {string} markdown
 * @returns {{ kind: string, code: string, line: number }[]}
 */
export function codeBlocks(markdown) {
  const blocks = [];
  const fence = /^```(ts|typescript)\b([^\n]*)\n([\s\S]*?)^```/gm;
  for (const match of markdown.matchAll(fence)) {
    const flag = match[2].trim();
    const kind = flag === '' ? 'program' : flag;
    const line = markdown.slice(0, match.index).split('\n').length + 1;
    blocks.push({ kind, code: match[3], line });
  }
  return blocks;
}

/** Runs `file` with node in an empty folder; resolves to its exit code and output. */
function runProgram(file, env) {
  const cwd = mkdtempSync(path.join(tmpdir(), 'readme-run-'));
  // The examples make temp folders as a user's program would; they go with this one.
  const temp = path.join(cwd, 'tmp');
  mkdirSync(temp);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], {
      cwd,
      env: { ...process.env, ...env, TMPDIR: temp },
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(cwd, { recursive: true, force: true });
      resolve({ ok: code === 0, output: signal ? `${output}\n(killed: ${signal})` : output });
    });
  });
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

async function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`usage: check-readmes [--root DIR]

Typechecks every \`\`\`ts block of the published packages' READMEs against the built
packages (build first) and runs those that are programs. Exit code 1 on any failure.`);
    return 0;
  }
  const root = rootOf(argv);
  const problems = [];
  const examples = [];
  const folders = [];
  for (const dir of workspacesOf(root)) {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    if (manifest.private) continue;
    const readme = path.join(dir, 'README.md');
    const blocks = codeBlocks(readFileSync(readme, 'utf8'));
    if (blocks.length === 0) continue;
    // Inside the package, so its imports resolve as its users' do (itself by name, its deps).
    const folder = path.join(dir, EXAMPLES);
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder);
    folders.push(folder);
    blocks.forEach((block, i) => {
      const where = `${path.relative(root, readme)}:${block.line}`;
      if (!KINDS.has(block.kind)) {
        problems.push(
          `${where}: unknown block kind "${block.kind}" (use ts, ts test, ts server or ts compile)`,
        );
        return;
      }
      const file = path.join(folder, `example-${i + 1}.ts`);
      writeFileSync(file, `// ${where}\n${block.code}`);
      examples.push({ ...block, where, file });
    });
  }
  try {
    const config = path.join(root, 'tools/repo-checks', EXAMPLES, 'tsconfig.json');
    mkdirSync(path.dirname(config), { recursive: true });
    folders.push(path.dirname(config));
    writeFileSync(
      config,
      JSON.stringify({
        extends: path.join(root, 'tsconfig.base.json'),
        compilerOptions: { declaration: false, sourceMap: false, inlineSources: false },
        files: examples.map((e) => e.file),
      }),
    );
    const tsc = path.join(
      path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
      'bin/tsc',
    );
    const compiled = spawnSync(process.execPath, [tsc, '-p', config], { encoding: 'utf8' });
    if (compiled.status !== 0) {
      problems.push(`README code does not compile:\n${compiled.stdout}${compiled.stderr}`);
    } else {
      // PGlite's initdb takes seconds: those programs start first, the quick ones fill in.
      const programs = examples
        .filter((e) => e.kind === 'program' || e.kind === 'server')
        .sort((a, b) => Number(b.code.includes('PGlite(')) - Number(a.code.includes('PGlite(')));
      const server = programs.some((e) => e.kind === 'server') ? await serverForTests() : undefined;
      const tasks = programs.map((example) => async () => {
        if (example.kind === 'server' && server === undefined) {
          console.log(`check-readmes: ${example.where} skipped (no PostgreSQL server)`);
          return;
        }
        const database = example.kind === 'server' ? await createTestDatabase(server) : undefined;
        try {
          const env = database ? { DATABASE_URL: database.url } : {};
          const { ok, output } = await runProgram(example.file.replace(/\.ts$/, '.js'), env);
          if (!ok) problems.push(`${example.where}: the program failed:\n${output}`);
        } finally {
          await database?.drop();
        }
      });
      await pool(tasks, Math.max(2, availableParallelism()));
    }
  } finally {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
  for (const problem of problems) console.error(problem);
  if (problems.length) {
    console.error(`check-readmes: ${problems.length} problem(s)`);
    return 1;
  }
  console.log(`check-readmes: ${examples.length} README code blocks compile and run`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2));
}

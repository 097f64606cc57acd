#!/usr/bin/env node
// Typechecks the README examples marked `<!-- typecheck -->` (the line right before a
// ```ts fence) in every workspace, with that workspace's dependencies and the repo's
// compiler options, so an example a user copies compiles. Build first: the examples
// import the packages' built types.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { workspacesOf } from './check-imports.mjs';

const MARKER = '<!-- typecheck -->';

/**
 * The marked examples of a markdown text.
 * @param {string} markdown
 * @returns {{ code: string, line: number }[]} `line`: the 1-based README line of the code's first line
 */
export function markedExamples(markdown) {
  const lines = markdown.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== MARKER || !/^```ts\s*$/.test(lines[i + 1] ?? '')) continue;
    const end = lines.findIndex((l, j) => j > i + 1 && l.startsWith('```'));
    if (end === -1) break;
    found.push({ code: lines.slice(i + 2, end).join('\n'), line: i + 3 });
    i = end;
  }
  return found;
}

/**
 * Typechecks the marked examples of every workspace README under `root`.
 * @param {string} root
 * @returns {string[]} one line per compiler error, as `README path:line: message`
 */
export function checkReadmeExamples(root) {
  const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
  const problems = [];
  for (const dir of workspacesOf(root)) {
    const readme = path.join(dir, 'README.md');
    if (!existsSync(readme)) continue;
    const examples = markedExamples(readFileSync(readme, 'utf8'));
    if (examples.length === 0) continue;
    // Inside the workspace, so imports resolve through its own node_modules and name.
    const scratch = path.join(dir, '.readme-examples');
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(scratch);
    try {
      for (const { code, line } of examples)
        writeFileSync(path.join(scratch, `line-${line}.ts`), code);
      writeFileSync(
        path.join(scratch, 'tsconfig.json'),
        JSON.stringify({
          extends: path.relative(scratch, path.join(root, 'tsconfig.base.json')),
          compilerOptions: { noEmit: true, declaration: false, declarationMap: false },
          include: ['*.ts'],
        }),
      );
      const run = spawnSync(tsc, ['-p', path.join(scratch, 'tsconfig.json'), '--pretty', 'false'], {
        encoding: 'utf8',
      });
      const where = path.relative(root, readme);
      const output = `${run.stdout}${run.stderr}`.trim();
      if (run.status === 0) continue;
      // One problem per diagnostic; tsc's indented elaboration lines stay with it.
      for (const text of output.split('\n')) {
        const match = /line-(\d+)\.ts\((\d+),\d+\): (.*)$/.exec(text);
        if (match)
          problems.push(`${where}:${Number(match[1]) + Number(match[2]) - 1}: ${match[3]}`);
        else if (problems.length > 0 && /^\s/.test(text))
          problems[problems.length - 1] += `\n${text}`;
        else problems.push(`${where}: ${text}`);
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  return problems;
}

function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`usage: check-readme-examples [--root DIR]

Typechecks every \`\`\`ts block of a workspace README.md that the line
${MARKER} precedes, against the workspace's dependencies (build first).
Exit code 1 on any compiler error.`);
    return 0;
  }
  const at = argv.indexOf('--root');
  const root =
    at >= 0
      ? path.resolve(argv[at + 1] ?? '.')
      : path.resolve(fileURLToPath(import.meta.url), '../../../..');
  const problems = checkReadmeExamples(root);
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(`check-readme-examples: ${problems.length} problem(s)`);
    return 1;
  }
  console.log('check-readme-examples: every marked example compiles');
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = main(process.argv.slice(2));
}

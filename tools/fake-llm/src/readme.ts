import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ProgramRun, runProgram } from './run.js';
import { isScriptName, type ScriptName } from './scripts.js';

/** One `node …` line of an example README's ```sh block, as a person types it. */
export interface ReadmeCommand {
  /** The line as written. */
  line: string;
  /** The `NAME=value` assignments before `node`. */
  env: Record<string, string>;
  /** What follows `node`: the program and its arguments, unquoted. */
  args: string[];
  /** Ends with `&`: started and left running. */
  background: boolean;
  /**
   * The output its `# →` comment promises: all of it, or its start when it ends with `…`;
   * none when the comment is in parentheses (a description, e.g. of a real model's answer).
   */
  expected?: { text: string; prefix: boolean };
}

/** The commands of an example README: the folder it `cd`s into and the `node` lines. */
export interface ReadmeScript {
  /** The build line (`npx pnpm@… build --filter …`): the tests run after the build. */
  build: string;
  /** The folder the commands run in, from the repository root (`examples/ai-sdk`). */
  cd: string;
  commands: ReadmeCommand[];
}

/** Splits a shell line into words, honouring single and double quotes (no escapes inside '…'). */
export function words(line: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') word = (word ?? '') + (line[++i] ?? '');
      else word = (word ?? '') + c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (quote) throw new Error(`unterminated ${quote} in: ${line}`);
  if (word !== undefined) out.push(word);
  return out;
}

/**
 * Reads the first ```sh block of an example README: a build line, a `cd`, then `node` lines,
 * each with an optional `# → output` comment. Anything else is an error, so that a README a
 * person cannot follow as written fails its test.
 */
export function readmeScript(markdown: string): ReadmeScript {
  const block = /^```sh\n([\s\S]*?)^```/m.exec(markdown)?.[1];
  if (block === undefined) throw new Error('the README has no ```sh block of commands');
  const script: ReadmeScript = { build: '', cd: '', commands: [] };
  for (const raw of block.split('\n')) {
    const hash = raw.indexOf(' #');
    const line = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    const comment = hash >= 0 ? raw.slice(hash + 2).trim() : '';
    if (line === '') continue;
    if (/^npx pnpm@\S+ build /.test(line)) {
      script.build = line;
      continue;
    }
    const parts = words(line);
    if (parts[0] === 'cd' && parts.length === 2) {
      script.cd = parts[1] as string;
      continue;
    }
    const env: Record<string, string> = {};
    while (parts[0] !== undefined && /^[A-Z_][A-Z0-9_]*=/.test(parts[0])) {
      const [name, ...value] = (parts.shift() as string).split('=');
      env[name as string] = value.join('=');
    }
    const background = parts.at(-1) === '&';
    if (background) parts.pop();
    if (parts.shift() !== 'node') throw new Error(`not a build, cd or node line: ${raw}`);
    const command: ReadmeCommand = { line, env, args: parts, background };
    const arrow = /^→\s*(.*)$/.exec(comment);
    // `# → (the model's answer)` describes what a real model prints: nothing to compare.
    if (arrow && !/^\(.*\)$/.test((arrow[1] as string).trim())) {
      const text = (arrow[1] as string).trim();
      command.expected = text.endsWith('…')
        ? { text: text.slice(0, -1).trimEnd(), prefix: true }
        : { text, prefix: false };
    }
    script.commands.push(command);
  }
  if (!script.build || !script.cd) throw new Error('the README has no build line or no cd');
  return script;
}

/** What a README command printed, and the command. */
export interface ReadmeStep {
  command: ReadmeCommand;
  run: ProgramRun;
}

/** An example run from a fresh copy, as its README says. */
export interface ReadmeRun {
  /** The copy of the example folder the commands ran in. */
  dir: string;
  steps: ReadmeStep[];
  /** Runs one more `node` command in the copy (e.g. a second `answer`). */
  node(args: readonly string[], env?: Record<string, string>): Promise<ProgramRun>;
  /** Stops what the README started in the background and removes the copy. */
  close(): Promise<void>;
}

export interface ReadmeRunOptions {
  /** Instead of the README's placeholder values (`sk-...`): NAME → value. */
  env?: Record<string, string>;
  /** How long one command may run before it is killed, in ms; default 60,000. */
  timeoutMs?: number;
}

/**
 * Runs an example's README commands as written in a fresh copy of the example folder (no
 * state, nothing made beforehand; its installed dependencies linked, the build already
 * done). A background command's output may fill a placeholder: `PORT` in its `# →` text
 * is read from what it prints and put into the later commands. Each step's output is
 * returned; the caller checks it against `command.expected` (see {@link printedAsPromised}).
 */
export async function runReadme(
  exampleDir: string,
  options: ReadmeRunOptions = {},
): Promise<ReadmeRun> {
  const script = readmeScript(readFileSync(path.join(exampleDir, 'README.md'), 'utf8'));
  // The written cd and build must be this example's, or a person following them runs another.
  const { name } = JSON.parse(readFileSync(path.join(exampleDir, 'package.json'), 'utf8')) as {
    name: string;
  };
  if (!path.resolve(exampleDir).endsWith(`${path.sep}${path.normalize(script.cd)}`)) {
    throw new Error(`the README's "cd ${script.cd}" is not the folder of ${exampleDir}`);
  }
  if (!script.build.includes(`--filter ${name}...`)) {
    throw new Error(`the README's build line does not build ${name}: ${script.build}`);
  }
  const root = mkdtempSync(path.join(tmpdir(), 'example-copy-'));
  const dir = path.join(root, script.cd);
  cpSync(exampleDir, dir, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|\.state)$/.test(source),
  });
  symlinkSync(realpathSync(path.join(exampleDir, 'node_modules')), path.join(dir, 'node_modules'));
  const background: ChildProcess[] = [];
  const filled = new Map<string, string>();
  const fill = (text: string) =>
    [...filled].reduce((out, [name, value]) => out.replaceAll(name, value), text);
  const envOf = (written: Record<string, string>) => {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(written)) env[name] = fill(value);
    return { ...env, ...options.env };
  };
  const timeoutMs = options.timeoutMs ?? 60_000;
  const node = (args: readonly string[], env: Record<string, string> = {}) =>
    runProgram(args[0] as string, args.slice(1), { ...envOf(env) }, timeoutMs, dir);
  const steps: ReadmeStep[] = [];
  const close = async () => {
    for (const child of background) child.kill();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    for (const command of script.commands) {
      const args = command.args.map(fill);
      if (command.background) {
        const run = await startBackground(args, envOf(command.env), dir, command.expected?.text);
        background.push(run.child);
        for (const [name, value] of run.placeholders) filled.set(name, value);
        steps.push({ command, run: run.printed });
      } else {
        steps.push({
          command,
          run: await runProgram(
            args[0] as string,
            args.slice(1),
            envOf(command.env),
            timeoutMs,
            dir,
          ),
        });
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { dir, steps, node, close };
}

/** The placeholders a README's `# →` text may hold, each read from the output as digits. */
const PLACEHOLDERS = ['PORT'];

/** Starts a background command and waits until it printed what its comment promises. */
function startBackground(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  expected = '',
): Promise<{ child: ChildProcess; printed: ProgramRun; placeholders: Map<string, string> }> {
  const names = PLACEHOLDERS.filter((name) => expected.includes(name));
  let pattern = expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const name of names) pattern = pattern.replaceAll(name, '(\\d+)');
  const promise = new RegExp(pattern);
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Filled for as long as it runs, so a test can read what it printed after the later steps.
  const printed: ProgramRun = { code: null, stdout: '', stderr: '' };
  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      printed.stderr += chunk.toString('utf8');
    });
    child.once('exit', (code) =>
      reject(
        new Error(
          `${args.join(' ')} exited (${code}) before printing "${expected}":\n${printed.stdout}${printed.stderr}`,
        ),
      ),
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      printed.stdout += chunk.toString('utf8');
      const match = promise.exec(printed.stdout);
      if (!match) return;
      const placeholders = new Map(names.map((name, i) => [name, match[i + 1] as string]));
      resolve({ child, printed, placeholders });
    });
  });
}

/**
 * What a command's `# →` comment promises it prints, as a pattern for its stdout: the whole
 * output, or its start when the comment ends with `…`; any output when there is no comment.
 */
export function promisedOutput(command: ReadmeCommand): RegExp {
  if (!command.expected) return /[\s\S]*/;
  const text = command.expected.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(command.expected.prefix ? `^${text}` : `^${text}\n$`);
}

/**
 * The script an example README tells a person without a key to serve
 * (`node tools/fake-llm/dist/cli.js --script NAME`), so that its test runs the commands
 * against the model the README names, not another.
 */
export function readmeFakeScript(exampleDir: string): ScriptName {
  const markdown = readFileSync(path.join(exampleDir, 'README.md'), 'utf8');
  const name = /node tools\/fake-llm\/dist\/cli\.js --script (\S+)/.exec(markdown)?.[1];
  if (name === undefined) {
    throw new Error('the README has no "node tools/fake-llm/dist/cli.js --script NAME" line');
  }
  if (!isScriptName(name)) throw new Error(`the README serves "${name}", which is no script`);
  return name;
}

#!/usr/bin/env node
// Writes the reference docs that are committed beside the code: each published package's API
// from its JSDoc (TypeDoc, Markdown in packages/NAME/docs/api/, one page per entry point) and
// the runner's CLI (apps/runner/docs/cli.md, the --help of each command). Committed Markdown
// reads on any forge and in a clone, and the README links to it work without a docs site.
// With --check it writes them to a scratch folder instead and fails when the committed ones
// differ, or when TypeDoc warns (a broken {@link}, an exported type that is not exported).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rootOf, workspacesOf } from '@internal/repo-checks/src/check-imports.mjs';
import { Application, Converter, LogLevel } from 'typedoc';

const API_DIR = 'docs/api';
const CLI_FILE = 'apps/runner/docs/cli.md';
const REGENERATE = 'pnpm docs:api';
// Types that only build others (a part of a union, a loosened copy): the reference shows
// what they expand to where they are used, rather than a page of their own.
const INTENTIONALLY_NOT_EXPORTED = {
  '@x/continuation': ['src/ai-sdk/types.ts:PartOf'],
  '@x/wire': ['src/ai-sdk-types.ts:DataContent', 'src/ai-sdk-types.ts:Loose'],
};

/**
 * A package's entry points, one per subpath export, as source files named by their import
 * specifier (`@x/continuation/testing`): `./dist/a/index.d.ts` is built from `src/a/index.ts`.
 * @param {string} dir the package folder
 * @param {Record<string, any>} manifest its package.json
 * @returns {{ specifier: string, source: string }[]}
 */
export function entryPointsOf(dir, manifest) {
  const entries = [];
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    if (subpath === './package.json') continue;
    const types = typeof target === 'object' ? target.types : undefined;
    const built = /^\.\/dist\/(.+)\.d\.ts$/.exec(types ?? '');
    const source =
      built &&
      ['.ts', '.js']
        .map((ext) => `src/${built[1]}${ext}`)
        .find((file) => existsSync(path.join(dir, file)));
    if (!source)
      throw new Error(
        `${manifest.name}: exports["${subpath}"] has no source under src/ for "${types}"`,
      );
    entries.push({
      specifier: path.posix.join(manifest.name, subpath),
      source: path.join(dir, source),
    });
  }
  return entries;
}

/**
 * The page of each entry point, by import specifier: a package of one entry point has one
 * page (`README.md`), one of several a page per entry point beside an index.
 * @param {{ specifier: string }[]} entries one package's
 * @returns {Map<string, string>} file names inside the package's reference folder
 */
export function pagesOf(entries) {
  if (entries.length === 1) return new Map([[entries[0].specifier, 'README.md']]);
  return new Map(
    entries.map((e) => [
      e.specifier,
      `${e.specifier.replace(/^@[^/]+\//, '').replaceAll('/', '.')}.md`,
    ]),
  );
}

/**
 * Writes one package's API reference into `out`.
 * @param {string} dir the package folder
 * @param {string} out
 * @param {Map<string, string>} pages every published entry point's page (absolute path where
 *   it is committed), the target of links to another package's exports
 * @returns {Promise<string[]>} a line for each package TypeDoc warned on; empty when all is well
 */
export async function writeApiReference(dir, out, pages) {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const entries = entryPointsOf(dir, manifest);
  const app = await Application.bootstrapWithPlugins({
    entryPoints: entries.map((e) => e.source),
    tsconfig: path.join(dir, 'tsconfig.build.json'),
    plugin: [fileURLToPath(import.meta.resolve('typedoc-plugin-markdown'))],
    out,
    name: manifest.name,
    readme: 'none',
    // Line numbers would make every edit of a source file stale the reference.
    disableSources: true,
    excludePrivate: true,
    excludeInternal: true,
    // Members inherited from Error and other built-ins are documented where they are declared.
    excludeExternals: true,
    validation: { notExported: true, invalidLink: true, rewrittenLink: true, notDocumented: false },
    intentionallyNotExported: INTENTIONALLY_NOT_EXPORTED[manifest.name] ?? [],
    logLevel: LogLevel.Warn,
    outputFileStrategy: 'modules',
    // One flat file per entry point: continuation.md, continuation.testing.md.
    flattenOutputFiles: true,
    excludeScopesInPaths: true,
    hidePageHeader: true,
    hideBreadcrumbs: true,
    useCodeBlocks: true,
    // Explicit anchors: the links to members are the plugin's, not a forge's heading slugs.
    useHTMLAnchors: true,
    parametersFormat: 'table',
  });
  // Each entry point is named by what a user imports, not by its file, before links resolve,
  // so a comment can link to another entry point's export: {@link @x/session!CheckpointStore}.
  const bySource = new Map(entries.map((e) => [path.resolve(e.source), e.specifier]));
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, ({ project }) => {
    for (const module of project.children ?? []) {
      const file = project.getSymbolIdFromReflection(module)?.fileName;
      const specifier = file && bySource.get(path.resolve(file));
      if (specifier) module.name = specifier;
    }
  });
  // A link to a sibling package's export goes to its page in that package's reference.
  const committed = path.join(dir, API_DIR);
  app.converter.addUnknownSymbolResolver((ref, _owner, _part, symbol) => {
    const from = symbol?.packageName ?? ref.moduleSource;
    const page = from !== manifest.name && pages.get(from ?? '');
    const name = symbol?.qualifiedName ?? ref.symbolReference?.path?.[0]?.path;
    if (!page || !name) return undefined;
    return `${path.relative(committed, page)}#${name.split('.')[0].toLowerCase()}`;
  });
  const project = app.logger.hasErrors() ? undefined : await app.convert();
  if (project) {
    app.validate(project);
    await app.generateOutputs(project);
  }
  return app.logger.hasErrors() || app.logger.hasWarnings()
    ? [`${manifest.name}: TypeDoc ${project ? 'warned' : 'could not convert it'} (see above)`]
    : [];
}

/**
 * The runner's CLI reference: `runner --help`, then `runner help COMMAND` for each command
 * its commands section lists and `runner help TOPIC` for each of its help topics.
 * @param {string} root
 * @returns {string}
 */
export function cliReference(root) {
  const runner = path.join(root, 'apps/runner');
  const { bin } = JSON.parse(readFileSync(path.join(runner, 'package.json'), 'utf8'));
  const cli = path.join(runner, bin.runner);
  const help = (...args) => {
    const result = spawnSync(process.execPath, [cli, ...args], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, NO_COLOR: '1' },
    });
    if (result.status !== 0) {
      throw new Error(`runner ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    }
    return result.stdout.trimEnd();
  };
  const overview = help('--help');
  const listed = (heading) => {
    const section = overview.split(heading)[1]?.split(/^\S/m)[0] ?? '';
    return [...new Set([...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]))];
  };
  // The commands, then the topics that are not commands (`runner help environment`).
  const commands = [...listed(/^commands:$/m), ...listed(/^help topics\b.*:$/m)];
  if (commands.length === 0) throw new Error('runner --help lists no commands');
  const block = (title, text) => `## ${title}\n\n\`\`\`text\n${text}\n\`\`\`\n`;
  return [
    "# The runner's CLI reference",
    '',
    `What \`runner --help\`, \`runner help COMMAND\` and \`runner help TOPIC\` print, generated by \`${REGENERATE}\`; \`pnpm verify\` fails when it is not current.`,
    '',
    commands.map((c) => `[${c}](#runner-help-${c})`).join(' · '),
    '',
    block('runner --help', overview),
    ...commands.map((c) => block(`runner help ${c}`, help('help', c))),
  ].join('\n');
}

/**
 * The files under two folders that differ: missing on one side or with other contents.
 * @param {string} expected
 * @param {string} actual
 * @returns {string[]} paths relative to the folders
 */
export function differingFiles(expected, actual) {
  const list = (dir) =>
    existsSync(dir)
      ? readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
      : [];
  const names = new Set([...list(expected), ...list(actual)]);
  return [...names].sort().filter((name) => {
    const read = (dir) => {
      const file = path.join(dir, name);
      return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    };
    return read(expected) === undefined || read(expected) !== read(actual);
  });
}

/**
 * Links in Markdown pages to a page or anchor that does not exist: the links into a sibling
 * package's reference are built here, so a renamed page or export would break them.
 * @param {string[]} files absolute paths of the pages
 * @param {(target: string) => boolean} [checked] the links to check (default: all relative ones)
 * @returns {string[]}
 */
export function brokenLinks(files, checked = () => true) {
  const anchors = new Map();
  const anchorsOf = (file) => {
    if (!anchors.has(file)) {
      const text = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
      anchors.set(file, text && new Set([...text.matchAll(/<a id="([^"]+)">/g)].map((m) => m[1])));
    }
    return anchors.get(file);
  };
  const broken = [];
  for (const file of files) {
    for (const [, target] of readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target) || !checked(target)) continue;
      const [page, anchor] = target.split('#');
      const found = anchorsOf(page ? path.resolve(path.dirname(file), page) : file);
      if (!found || (anchor && !found.has(anchor))) broken.push(`${file}: broken link ${target}`);
    }
  }
  return broken;
}

/**
 * Each package README that does not link its reference, or links a page of it that does not
 * exist, and a runner README that does not link the CLI reference.
 * @param {string} root
 * @param {string[]} packages the published packages' folders
 * @returns {string[]}
 */
export function readmeLinkProblems(root, packages) {
  const problems = [];
  const readmes = packages.map((dir) => path.join(dir, 'README.md'));
  for (const readme of readmes) {
    if (!readFileSync(readme, 'utf8').includes(`](${API_DIR}/`)) {
      problems.push(`${readme}: does not link its API reference (${API_DIR}/)`);
    }
  }
  // Only the links into the reference: a README's heading anchors are the forge's slugs.
  problems.push(...brokenLinks(readmes, (target) => target.startsWith(`${API_DIR}/`)));
  const runner = path.join(root, 'apps/runner/README.md');
  const link = `](${path.posix.relative('apps/runner', CLI_FILE)})`;
  if (!readFileSync(runner, 'utf8').includes(link)) {
    problems.push(`${runner}: does not link the CLI reference (${CLI_FILE})`);
  }
  return problems.map((line) => path.relative(root, line));
}

async function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`usage: api-docs [--check] [--root DIR]

Writes each published package's API reference (${API_DIR}/ in the package) and the
runner's CLI reference (${CLI_FILE}). Build first: TypeDoc resolves the packages'
imports of each other through dist/, and the CLI reference runs the built runner.
--check writes them to a scratch folder and fails (exit 1) when the committed ones
differ or TypeDoc warns.`);
    return 0;
  }
  const root = rootOf(argv);
  const check = argv.includes('--check');
  const scratch = check ? mkdtempSync(path.join(tmpdir(), 'api-docs-')) : undefined;
  const problems = [];
  try {
    const packages = workspacesOf(root).filter(
      (dir) => !JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).private,
    );
    const pages = new Map(
      packages.flatMap((dir) => {
        const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
        return [...pagesOf(entryPointsOf(dir, manifest))].map(([specifier, page]) => [
          specifier,
          path.join(dir, API_DIR, page),
        ]);
      }),
    );
    for (const dir of packages) {
      const committed = path.join(dir, API_DIR);
      const out = scratch ? path.join(scratch, path.relative(root, dir)) : committed;
      rmSync(out, { recursive: true, force: true });
      problems.push(...(await writeApiReference(dir, out, pages)));
      if (scratch) {
        for (const file of differingFiles(committed, out)) {
          problems.push(`${path.relative(root, path.join(committed, file))} is not current`);
        }
      }
    }
    const committedPages = packages.flatMap((dir) =>
      readdirSync(path.join(dir, API_DIR)).map((name) => path.join(dir, API_DIR, name)),
    );
    problems.push(...brokenLinks(committedPages).map((line) => path.relative(root, line)));
    problems.push(...readmeLinkProblems(root, packages));
    const cli = path.join(root, CLI_FILE);
    const text = cliReference(root);
    if (!scratch) {
      mkdirSync(path.dirname(cli), { recursive: true });
      await writeFile(cli, text);
    } else if (!existsSync(cli) || readFileSync(cli, 'utf8') !== text) {
      problems.push(`${CLI_FILE} is not current`);
    }
    for (const line of problems) console.error(line);
    if (problems.length) {
      console.error(
        `api-docs: ${problems.length} problem(s)${check ? `; fix any warning, then run \`${REGENERATE}\` and commit what it writes` : ''}`,
      );
      return 1;
    }
    console.log(
      `api-docs: the API reference of ${packages.length} packages and the CLI reference are ${check ? 'current' : 'written'}`,
    );
    return 0;
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2));
}

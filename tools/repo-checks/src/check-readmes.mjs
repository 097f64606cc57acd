#!/usr/bin/env node
// Checks the published packages' READMEs as a user reads them off npm: each starts with the
// section "Before the packages are published" (one `npm install` line of the packed tarballs
// its install lines need, from `pack:local`'s folder) and the `npm install` lines its examples
// need, and every TypeScript code block compiles and runs in a plain npm project holding the
// packed tarballs plus exactly those lines' packages (at the workspace catalog's versions),
// never against the workspace. The READMEs of FOLLOWED are followed literally instead, each in
// a project of its own: its section's line run by a shell, then its other packages. Links
// must work from the installed package. A block's fence says what it
// is: ```ts is a program (compiled, then run in an empty folder), ```ts test is a vitest file
// (compiled and run), ```ts server is a program that needs PostgreSQL (run twice against one
// throwaway database, DATABASE_URL; skipped without a server, failed in CI), ```ts compile
// is a fragment that needs something outside (a model, a key): compiled only. A ```js file
// PATH block is a file the tests need, written at PATH beside them. An `…Error` the prose
// names in backticks must exist: ours, JavaScript's, or in a dependency's types.
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
import { importsOf, isBuiltin, packageOf, rootOf } from './check-imports.mjs';
import {
  installClosure,
  PACKED_VARIABLE,
  packedInstallLine,
  packLocal,
  publishedPackages,
  tarballName,
} from './pack-local.mjs';
import { run } from './run.mjs';

const KINDS = new Set(['program', 'test', 'server', 'compile']);
// The READMEs followed literally, each in a project of its own from its "Before the packages
// are published" line on (the others share one project): the one whose line installs the most
// of ours, a peer among them. `--follow all` follows every one.
const FOLLOWED = ['@x/continuation-postgres'];
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

export const BEFORE_PUBLISHED = 'Before the packages are published';

/**
 * The install line of a README's first section, "Before the packages are published": one
 * ```sh block of one `npm install` line of tarballs from the packed folder (`pack:local`).
 * @param {string} markdown
 * @returns {{ line: string, problem?: undefined } | { line?: undefined, problem: string }}
 */
export function packedSection(markdown) {
  const at = beforePublished(markdown);
  const [first] = fences(markdown);
  if (!at || (first && first.index < at.start)) {
    return { problem: `does not start with its section "## ${BEFORE_PUBLISHED}"` };
  }
  const section = markdown.slice(at.start, at.end);
  const [block] = fences(section);
  const lines = (block?.code ?? '')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l !== '');
  if (!block || !['sh', 'bash', 'shell'].includes(block.lang) || lines.length !== 1) {
    return {
      problem: `its section "${BEFORE_PUBLISHED}" must hold one \`\`\`sh block of one \`npm install\` line`,
    };
  }
  return { line: lines[0] };
}

/** Where a README's first `##` section is, when it is "Before the packages are published". */
function beforePublished(markdown) {
  const heading = /^## (.*)$/m.exec(markdown);
  if (heading?.[1].trim() !== BEFORE_PUBLISHED) return undefined;
  const after = heading.index + heading[0].length;
  const next = markdown.slice(after).search(/^## /m);
  return { start: heading.index, end: next < 0 ? markdown.length : after + next };
}

/**
 * The packages a README's install block names. The README must start with it: its first
 * code block outside the section "Before the packages are published", before any section
 * but that one and "Install", only `npm install` lines (`-D` for dev ones).
 * @param {string} markdown
 * @returns {{ packages: string[], problem?: undefined } | { packages?: undefined, problem: string }}
 */
export function installLine(markdown) {
  const at = beforePublished(markdown);
  const outside = at ? markdown.slice(0, at.start) + markdown.slice(at.end) : markdown;
  const [first] = fences(outside);
  const section = outside.search(/^## (?!Install$)/m);
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

/**
 * The links of a Markdown text that `works` refuses, with their line (anchors in the same
 * page are not links to check).
 * @param {string} markdown
 * @param {(target: string) => boolean} works
 * @returns {{ target: string, line: number }[]}
 */
export function deadLinks(markdown, works) {
  const found = [];
  for (const match of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1];
    if (target.startsWith('#') || works(target)) continue;
    found.push({ target, line: markdown.slice(0, match.index).split('\n').length });
  }
  return found;
}

/**
 * Whether a link of a Markdown file in a published package works where a user reads the
 * package: in its folder of node_modules, beside the packages its packed line installs. A
 * relative link must reach a file the package ships, or one another of those packages ships;
 * a link into the repository (its web address, `/blob/main/` or `/tree/main/`) a path
 * that exists; other addresses are not checked.
 * @param {{ root: string, web: string | undefined, from: string, closure: string[], published: Map<string, { dir: string, manifest: Record<string, any> }> }} where
 * @returns {(target: string) => boolean}
 */
export function linkWorks({ root, web, from, closure, published }) {
  const ships = (name, rest) => {
    const { dir, manifest } = published.get(name);
    const [first] = rest.split('/');
    const shipped =
      ['README.md', 'LICENSE', 'package.json'].includes(rest) ||
      (manifest.files ?? []).some((f) => !f.startsWith('!') && f === first);
    return shipped && existsSync(path.join(dir, rest));
  };
  return (link) => {
    const target = link.replace(/#.*/, '');
    if (web && target.startsWith(`${web}/`)) {
      const inRepo = /^\/(?:blob|tree)\/main\/(.+)$/.exec(target.slice(web.length));
      return inRepo !== null && existsSync(path.join(root, inRepo[1]));
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return true;
    const resolved = path.resolve(path.dirname(from), target);
    return closure.some((name) => {
      const rest = path.relative(published.get(name).dir, resolved);
      return !rest.startsWith('..') && ships(name, rest.split(path.sep).join('/'));
    });
  };
}

// The repository's own pages whose links are checked too: the runner's README, its topic
// pages and the bench's history (they are read in the repository, not from a package).
const REPO_PAGES = ['apps/runner/README.md', 'apps/runner/docs', 'tools/bench/HISTORY.md'];

/** The anchors of a Markdown page's headings, as the forge makes them, and its `<a id>`s. */
export function anchorsOf(markdown) {
  const anchors = new Set();
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const match of text.matchAll(/^#{1,6} (.+)$/gm)) {
    anchors.add(
      match[1]
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\- _]/gu, '')
        .replace(/ /g, '-'),
    );
  }
  for (const match of markdown.matchAll(/<a id="([^"]+)"/g)) anchors.add(match[1]);
  return anchors;
}

/**
 * The relative links of REPO_PAGES that reach no file, or no heading of the page they name,
 * each as `page:line: link`.
 * @param {string} root
 * @returns {string[]}
 */
export function repoPageProblems(root) {
  const pages = REPO_PAGES.flatMap((at) => {
    const full = path.join(root, at);
    if (!existsSync(full)) return [];
    if (!full.endsWith('.md')) {
      return readdirSync(full)
        .filter((f) => f.endsWith('.md'))
        .map((f) => path.join(full, f));
    }
    return [full];
  });
  const problems = [];
  for (const page of pages) {
    const markdown = readFileSync(page, 'utf8');
    const works = (link) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) return true;
      const [file, anchor] = link.split('#');
      const target = file === '' ? page : path.resolve(path.dirname(page), file);
      if (!existsSync(target)) return false;
      if (anchor === undefined || !target.endsWith('.md')) return true;
      return anchorsOf(readFileSync(target, 'utf8')).has(anchor);
    };
    for (const match of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (works(match[1])) continue;
      const line = markdown.slice(0, match.index).split('\n').length;
      problems.push(`${path.relative(root, page)}:${line}: ${match[1]} reaches nothing`);
    }
  }
  return problems;
}

/** The web address of the root manifest's git repository (`git+https://…/x.git` → `https://…/x`). */
export function webOf(repository) {
  return repository?.url?.replace(/^git\+/, '').replace(/\.git$/, '');
}

/** The Markdown files a package ships: its README and its docs. */
function markdownOf(dir) {
  const docs = path.join(dir, 'docs');
  const pages = existsSync(docs)
    ? readdirSync(docs, { recursive: true })
        .filter((f) => String(f).endsWith('.md'))
        .map((f) => path.join(docs, String(f)))
    : [];
  return [path.join(dir, 'README.md'), ...pages];
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
  const published = publishedPackages(root);
  const web = webOf(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).repository);
  const ours = exportedNames([...published.values()].map((p) => p.dir));
  for (const [name, { dir, manifest }] of published) {
    const readme = path.join(dir, 'README.md');
    const where = path.relative(root, readme);
    const markdown = readFileSync(readme, 'utf8');
    const install = installLine(markdown);
    if (install.problem) {
      problems.push(`${where}: ${install.problem}`);
      continue;
    }
    const packed = packedSection(markdown);
    const expected = packedInstallLine(
      install.packages.filter((pkg) => published.has(pkg)),
      published,
    );
    const closure = installClosure(
      [name, ...install.packages.filter((pkg) => published.has(pkg))],
      published,
    );
    for (const from of markdownOf(dir)) {
      const works = linkWorks({ root, web, from, closure, published });
      for (const { target, line } of deadLinks(readFileSync(from, 'utf8'), works)) {
        problems.push(
          `${path.relative(root, from)}:${line}: links "${target}", which is not in the packed package nor in one that its install line puts beside it (link into the repository: ${web}/blob/main/...)`,
        );
      }
    }
    if (packed.problem) problems.push(`${where}: ${packed.problem}`);
    else if (packed.line !== expected) {
      problems.push(
        `${where}: the line of "${BEFORE_PUBLISHED}" must install the install line's packages of ours and what they need, together:\n  ${expected}`,
      );
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
    readmes.push({
      name,
      dir,
      where,
      packages: install.packages,
      packedLine: packed.line,
      blocks,
      files,
    });
  }
  return { problems, readmes, published };
}

async function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`usage: check-readmes [--root DIR] [--follow all|NAME,...] [--static]

Checks every published package's README as a user installs it: it starts with the
section "${BEFORE_PUBLISHED}" (one \`npm install\` line of the packed
tarballs its packages of ours need, together) and its \`npm install\` lines, its links
work from the installed package, and every \`\`\`ts block compiles (tsc, strict,
NodeNext) and runs in a plain npm project under the system temp folder holding the
packed tarballs (pack:local) and the install lines' packages at the catalog's versions
(npm's cache is reused, and the project's third-party packages are kept for the next
run; the registry must be reachable). The READMEs --follow names (${FOLLOWED.join(', ')}
unless told) are followed literally in a project each: the section's line run by sh
with ${PACKED_VARIABLE} set, then the install lines' other packages. \`ts server\` blocks run
twice against one throwaway database. A backticked \`…Error\` name must be exported by
our packages, JavaScript or a dependency. The relative links of the runner's README,
its docs/ pages and tools/bench/HISTORY.md must reach a file (and heading). --static checks the READMEs' text only (their
lines, links and names), packing and running nothing. Build first. Exit code 1 on any failure.`);
    return 0;
  }
  const root = rootOf(argv);
  const catalog = catalogOf(readFileSync(path.join(root, 'pnpm-workspace.yaml'), 'utf8'));
  const { problems, readmes, published } = readReadmes(root, catalog);
  problems.push(...repoPageProblems(root));
  const examples = readmes.flatMap((r) => r.blocks);
  const follow = argv.includes('--follow')
    ? (argv[argv.indexOf('--follow') + 1] ?? '').split(',')
    : FOLLOWED;
  const unknown = follow.filter((name) => name !== 'all' && !published.has(name));
  if (unknown.length) problems.push(`--follow names no published package: ${unknown.join(', ')}`);
  // What needs no packing, for the quick lane: a line of ours missing after a dependency changed.
  const quick = argv.includes('--static');
  if (problems.length === 0 && !quick) {
    // Outside the repository (inside, it would also see the workspace's node_modules), one per
    // checkout. Their third-party packages are kept between runs: npm then only checks them.
    const key = createHash('sha256').update(root).digest('hex').slice(0, 12);
    const followed = (r) => follow.includes('all') || follow.includes(r.name);
    const projects = [
      { project: `x-readme-examples-${key}`, readmes: readmes.filter((r) => !followed(r)) },
      ...readmes.filter(followed).map((r) => ({
        project: `x-readme-examples-${key}-${tarballName(r.name).replace(/\.tgz$/, '')}`,
        readmes: [r],
        literally: true,
      })),
    ].map((p) => ({ ...p, project: path.join(tmpdir(), p.project) }));
    for (const { project } of projects) clean(project);
    try {
      problems.push(...(await checkInProjects(root, projects, catalog, published)));
    } finally {
      for (const { project } of projects) clean(project);
    }
  }
  for (const problem of problems) console.error(problem);
  if (problems.length) {
    console.error(`check-readmes: ${problems.length} problem(s)`);
    return 1;
  }
  console.log(
    quick
      ? `check-readmes: ${readmes.length} READMEs start with their install lines, their links work from the installed packages, and the runner's pages' links resolve (--static: nothing packed or run)`
      : `check-readmes: ${readmes.length} READMEs start with their install lines; their ${examples.length} code blocks compile and run from the packed packages (${seconds()})`,
  );
  return 0;
}

/** Empties an examples project but for its third-party packages. */
function clean(project) {
  mkdirSync(project, { recursive: true });
  for (const entry of readdirSync(project)) {
    if (entry !== 'node_modules')
      rmSync(path.join(project, entry), { recursive: true, force: true });
  }
  // Ours are packed afresh each run: npm must not keep a copy of an older build.
  for (const ours of ['node_modules/@x', 'node_modules/.package-lock.json']) {
    rmSync(path.join(project, ours), { recursive: true, force: true });
  }
}

/**
 * Packs once, then installs each project and checks its READMEs' examples there; returns
 * problems. A project `literally` installs its README's own line from the packed folder.
 */
async function checkInProjects(root, projects, catalog, published) {
  for (const { project } of projects) {
    const above = nodeModulesAbove(project);
    if (above) {
      return [
        `the examples' project ${project} would see ${above}/node_modules: set TMPDIR elsewhere`,
      ];
    }
  }
  const packs = path.join(projects[0].project, 'packs');
  let tarballs;
  try {
    tarballs = await packLocal(root, packs);
  } catch (error) {
    return [error.message];
  }
  console.log(`check-readmes: packed in ${seconds()}`);
  const needsServer = projects.some((p) =>
    p.readmes.some((r) => r.blocks.some((b) => b.kind === 'server')),
  );
  const server = needsServer ? await serverForTests() : undefined;
  const problems = [];
  // One install at a time, each project's examples run while the next project installs.
  const checking = [];
  for (const { project, readmes, literally } of projects) {
    if (readmes.length === 0) continue;
    const temp = path.join(project, 'tmp');
    mkdirSync(temp);
    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'readme-examples', private: true, type: 'module' }),
    );
    const failure = literally
      ? await installLiterally(project, readmes[0], packs, catalog, published)
      : await installAll(project, readmes, [...tarballs.values()], catalog, published);
    if (failure) {
      problems.push(failure);
      continue;
    }
    console.log(
      `check-readmes: installed ${literally ? `${readmes[0].where} literally` : `${readmes.length} READMEs' packages`} in ${seconds()}`,
    );
    const where = literally ? readmes[0].where : `${readmes.length} READMEs`;
    checking.push(
      checkExamples(project, readmes, server).then((found) => {
        console.log(`check-readmes: ran the code blocks of ${where} by ${seconds()}`);
        problems.push(...found);
      }),
    );
  }
  await Promise.all(checking);
  return problems;
}

/** The install lines' third-party packages at the catalog's versions, or the missing ones. */
function pinnedSpecs(readmes, catalog, published) {
  const wanted = new Set([...TOOLING, ...readmes.flatMap((r) => r.packages)]);
  const names = [...wanted].filter((pkg) => !published.has(pkg));
  const missing = names.filter((pkg) => !catalog.has(pkg));
  if (missing.length) return { missing };
  return { specs: names.map((pkg) => `${pkg}@${catalog.get(pkg)}`) };
}

const NPM_INSTALL = ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

/** Installs every tarball and the READMEs' third-party packages in one npm run. */
async function installAll(project, readmes, tarballs, catalog, published) {
  const { specs, missing } = pinnedSpecs(readmes, catalog, published);
  if (missing) return `the catalog has no version for ${missing.join(', ')}`;
  const installed = await run('npm', [...NPM_INSTALL, ...tarballs, ...specs], {
    cwd: project,
    env: { TMPDIR: path.join(project, 'tmp') },
    timeout: 300_000,
  });
  if (!installed.ok) {
    return `npm install of the packed packages and the install lines failed:\n${installed.output}`;
  }
}

/**
 * Follows a README as a user does before the packages are published: its section's line run
 * as written by a shell, with the packed folder in its variable, then its install lines'
 * other packages (at the catalog's versions).
 */
async function installLiterally(project, readme, packs, catalog, published) {
  const { specs, missing } = pinnedSpecs([readme], catalog, published);
  if (missing) return `the catalog has no version for ${missing.join(', ')}`;
  const env = { TMPDIR: path.join(project, 'tmp'), [PACKED_VARIABLE]: packs };
  const line = await run('sh', ['-c', readme.packedLine], { cwd: project, env, timeout: 300_000 });
  if (!line.ok) {
    return `${readme.where}: its line "${readme.packedLine}" failed in a plain npm project:\n${line.output}`;
  }
  const rest = await run('npm', [...NPM_INSTALL, ...specs], {
    cwd: project,
    env,
    timeout: 300_000,
  });
  if (!rest.ok) {
    return `${readme.where}: after its packed line, npm install of its install lines' other packages failed:\n${rest.output}`;
  }
}

/** Compiles and runs the READMEs' examples in `project`, where their packages are installed. */
async function checkExamples(project, readmes, server) {
  const temp = path.join(project, 'tmp');
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
  const compiled = await run(process.execPath, [tsc, '-p', project], {
    cwd: project,
    timeout: 300_000,
  });
  if (!compiled.ok) {
    return [`README code does not compile:\n${compiled.output}`];
  }
  const problems = [];
  const examples = readmes.flatMap((r) => r.blocks);
  const programs = examples
    .filter((e) => e.kind === 'program' || e.kind === 'server')
    // PGlite's initdb takes seconds: those programs start first, the quick ones fill in.
    .sort((a, b) => Number(b.code.includes('PGlite(')) - Number(a.code.includes('PGlite(')));
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

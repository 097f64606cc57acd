import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type postgres from 'postgres';

const PATCH = fileURLToPath(new URL('../../../patches/postgres@3.4.9.patch', import.meta.url));

/**
 * The lines the repository's patch adds to `file` of postgres.js, hunk by hunk, as the
 * patched text shows them (context and added lines), and which of those lines it added.
 */
function hunksOf(patch: string, file: string): Array<{ lines: string[]; added: boolean[] }> {
  const section = patch.split(/^diff --git /m).find((s) => s.startsWith(`a/${file} `));
  if (section === undefined) throw new Error(`the postgres.js patch does not touch ${file}`);
  return section
    .split(/^@@ .* @@.*$/m)
    .slice(1)
    .map((hunk) => {
      const rows = hunk.replace(/^\n/, '').replace(/\n$/, '').split('\n');
      if (rows.some((row) => row.startsWith('-'))) {
        throw new Error('the postgres.js patch removes lines: undoing it needs a real patch tool');
      }
      return { lines: rows.map((row) => row.slice(1)), added: rows.map((r) => r.startsWith('+')) };
    });
}

/** `patched` without the lines the repository's patch added; throws if the patch does not fit. */
export function unpatch(patched: string, patch: string, file: string): string {
  let text = patched;
  for (const { lines, added } of hunksOf(patch, file)) {
    const at = text.indexOf(lines.join('\n'));
    if (at < 0) throw new Error(`a hunk of the postgres.js patch is not in ${file}`);
    const original = lines.filter((_, i) => !added[i]).join('\n');
    text = text.slice(0, at) + original + text.slice(at + lines.join('\n').length);
  }
  return text;
}

/**
 * Stock postgres.js 3.4.9, as consumers of our packages install it: pnpm applies the
 * repository's patch to every copy of postgres@3.4.9 (aliases and tarball URLs included),
 * so this takes the installed ESM sources and takes the patch's added lines out again
 * (the patch only adds lines), in a temp folder. For tests that must show the packages
 * behave with the driver users really have.
 */
export async function loadStockPostgres(): Promise<typeof postgres> {
  // The ESM entry is <package>/src/index.js.
  const installed = dirname(dirname(fileURLToPath(import.meta.resolve('postgres'))));
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  if (manifest.version !== '3.4.9') {
    throw new Error(`postgres ${manifest.version} is installed; the stock loader is for 3.4.9`);
  }
  const copy = mkdtempSync(join(tmpdir(), 'postgres-stock-'));
  cpSync(join(installed, 'src'), join(copy, 'src'), { recursive: true });
  writeFileSync(join(copy, 'package.json'), '{ "type": "module" }');
  const patch = readFileSync(PATCH, 'utf8');
  for (const file of ['src/connection.js', 'src/index.js', 'src/queue.js']) {
    const source = join(copy, file);
    writeFileSync(source, unpatch(readFileSync(source, 'utf8'), patch, file));
  }
  try {
    // Its modules import one another statically: once loaded, the copy is not needed again.
    const module = await import(pathToFileURL(join(copy, 'src/index.js')).href);
    return module.default as typeof postgres;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/**
 * Terminates the connection of `client` (one connection: `max: 1`) while a statement runs
 * on it, as a server restart or a proxy would; resolves once that statement has failed.
 * With stock postgres.js 3.4.9 the next statement on `client` then fails with a stale
 * 57P01 although it ran.
 */
export async function dropConnection(client: postgres.Sql, admin: postgres.Sql): Promise<void> {
  const [row] = await client`select pg_backend_pid() as pid`;
  const inFlight = client`select pg_sleep(10)`.catch(() => {});
  for (let attempt = 0; attempt < 500; attempt++) {
    const [state] = await admin`select state from pg_stat_activity where pid = ${row?.pid}`;
    if (state?.state === 'active') break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await admin`select pg_terminate_backend(${row?.pid})`;
  await inFlight;
}

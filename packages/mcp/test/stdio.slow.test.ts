import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';

const CLIENT = fileURLToPath(new URL('./stdio-client.mjs', import.meta.url));
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

type Entry = { pid?: number; stdin?: string; stdout?: string; action?: string; error?: string };

/**
 * Starts a client on `@x/mcp` whose stdio server asks a question, SIGKILLs the client once the
 * question is stored, and returns how the server's request ended.
 */
async function killClientWhileAsked(mode: 'watch' | 'close-on-end', timeoutMs: number) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-stdio-'));
  const file = path.join(dir, 'server.jsonl');
  const entries = () =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Entry)
      : [];
  cleanups.push(() => {
    for (const { pid } of entries()) {
      try {
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {} // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const client = spawn(process.execPath, [CLIENT, file, String(timeoutMs), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push(() => client.kill('SIGKILL'));
  const token = await new Promise<string>((resolve, reject) => {
    let out = '';
    client.stdout.on('data', (chunk) => {
      out += chunk;
      const asked = /^asked (\S+)$/m.exec(out);
      if (asked?.[1]) resolve(asked[1]);
    });
    client.on('exit', (code) => reject(new Error(`the client exited (${code}): ${out}`)));
  });
  client.kill('SIGKILL');
  for (;;) {
    const all = entries();
    const outcome = all.find((e) => e.action !== undefined || e.error !== undefined);
    if (outcome) return { token, outcome, entries: all };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it("a SIGKILLed client on stdio: the SDK's stdio server is not told, and its request waits out its timeout", async () => {
  const { token, outcome, entries } = await killClientWhileAsked('watch', 2000);
  expect(token).toMatch(/^mcp-conn-/);
  // Its stdin had ended before the request failed, and not for that reason.
  expect(entries.findIndex((e) => e.stdin === 'end')).toBeGreaterThan(-1);
  expect(entries.findIndex((e) => e.stdin === 'end')).toBeLessThan(entries.indexOf(outcome));
  expect(outcome.error).toMatch(/Request timed out/);
  // The cancellation it sends the client then cannot be written.
  expect(entries).toContainEqual({ stdout: 'EPIPE' });
}, 60_000);

it('a SIGKILLed client on stdio: a server that closes its transport when stdin ends fails the request at once', async () => {
  const { outcome } = await killClientWhileAsked('close-on-end', 600_000);
  expect(outcome.error).toMatch(/Connection closed/);
}, 60_000);

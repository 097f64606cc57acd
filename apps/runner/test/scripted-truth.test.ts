import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { dataDirs, runCli } from './run-cli.js';

// The scripted payment scenarios read their tool results as a model would: a deadline's
// default decline is a decline, and the invoice is the one the goal names.

const dataDir = dataDirs();

type Block = { type: string; text?: string; input?: unknown; content?: unknown };

describe('the scripted payment reads the truth', { timeout: 120_000 }, () => {
  it('after a default decline at the deadline it says invoice 43 was not paid', async () => {
    const data = dataDir();
    const env = { RUNNER_DEADLINE: 'approve=1s:decline' };
    const cli = (args: string[]) => runCli([...args, '--data', data], { env });
    const started = await cli([
      'exec',
      'Pay invoice 43',
      '--model',
      'scripted:gated',
      '--conversation',
      'pay-43',
    ]);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toContain('I will pay invoice 43 once you approve the transfer.');
    expect(started.stdout).toContain('"reference":"invoice 43"');
    // Past the one-second deadline, wake applies the default decline and resumes the run.
    await sleep(1500);
    const woke = await cli(['wake', '--once']);
    expect(woke.code, woke.stderr).toBe(0);
    const shown = await cli(['show', 'pay-43', '--json']);
    const run = shown.events.find((e) => e.type === 'run') as unknown as {
      messages: Array<{ role: string; content: Block[] }>;
    };
    const last = run.messages.at(-1);
    const result = run.messages.at(-2)?.content.find((b) => b.type === 'tool_result');
    expect(JSON.stringify(result?.content)).toContain('the default (decline) was applied');
    expect(last).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Understood: invoice 43 was not paid, and I sent nothing.' }],
    });
  });
});

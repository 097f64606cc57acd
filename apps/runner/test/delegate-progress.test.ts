import { newDelegation, runWorkers } from '@x/executive';
import type { StreamEvent } from '@x/wire';
import { describe, expect, it } from 'vitest';
import { demoWorkers } from '../src/demo/tools.js';
import { ScriptedModel } from '../src/model/scripted.js';

const TASKS = [
  'Choose the hotel for the Lisbon trip',
  'Choose the flight to Lisbon',
  'Check the weather in Lisbon',
];

describe('worker progress lines', () => {
  it('a worker’s "finished" or "asks" line comes only after its step was stored', async () => {
    const delegation = newDelegation(
      { type: 'tool_use', id: 'call-1', name: 'delegate', input: { tasks: TASKS } },
      TASKS,
    );
    const stored = new Set<string>();
    const lines: Array<{ line: string; stored: string[] }> = [];
    const observer = {
      event(event: StreamEvent) {
        if (event.type === 'tool-progress')
          lines.push({ line: event.message, stored: [...stored] });
      },
    };
    await runWorkers(
      delegation,
      delegation.workers.map((w) => w.id),
      new ScriptedModel('team'),
      observer,
      {
        ...demoWorkers(),
        // A store that takes a while: a line printed before it ends would find its worker missing.
        settled: async (worker) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          stored.add(worker.id);
        },
      },
    );
    expect(lines.map((l) => l.line.split(':')[0])).toEqual(
      expect.arrayContaining(['w1 asks', 'w2 asks', 'w3 finished']),
    );
    for (const { line, stored: before } of lines) {
      expect(before, line).toContain(line.split(' ')[0]);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { continuationGoal } from './bench-continuation.js';
import { judge } from './report.js';

describe('the continuation rows’ goal', () => {
  it('is 0.8 of the floor at 10 and 100 messages, and 0.9 of the JSON bound at 1,000', () => {
    expect(continuationGoal(10, 0.7)).toMatchObject({ value: 0.8, label: '≥ 0.8' });
    expect(continuationGoal(100, 0.7)).toMatchObject({ value: 0.8 });
    const goal = continuationGoal(1000, 0.5);
    expect(goal).toMatchObject({ kind: 'at-least', label: '≥ 0.9 × bound = 0.45' });
    const row = { section: 's', name: 'n', ratioMeaning: 'floor/subject', goal };
    expect(judge({ ...row, ratio: 0.46 }).status).toBe('met');
    expect(judge({ ...row, ratio: 0.44 }).status).toBe('missed');
    expect(judge({ ...row, goal: continuationGoal(1000, Number.NaN), ratio: 0.9 }).status).toBe(
      'missed',
    );
  });
});

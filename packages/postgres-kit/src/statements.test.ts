import { describe, expect, it } from 'vitest';
import { lazyStatements } from './statements.js';

describe('lazyStatements', () => {
  it('builds a statement on its first use only, and never one left unused', () => {
    const built: string[] = [];
    const statements = lazyStatements({
      load: () => {
        built.push('load');
        return { name: 'load' };
      },
      save: () => {
        built.push('save');
        return { name: 'save' };
      },
    });
    expect(built).toEqual([]);
    const first = statements.load;
    expect(statements.load).toBe(first);
    expect(built).toEqual(['load']);
  });
});

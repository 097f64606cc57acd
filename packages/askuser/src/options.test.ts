import { describe, expect, it } from 'vitest';
import { optionLabel, shownOptions } from './index.js';

describe('shownOptions', () => {
  it('keeps strings and labelled objects as the app gave them', () => {
    expect(
      shownOptions(['yes', { label: 'no', description: 'Keep it' }, { label: 'later' }]),
    ).toEqual([
      'yes',
      { label: 'no', description: 'Keep it' },
      { label: 'later', description: null },
    ]);
  });

  it('shows any other value as its JSON', () => {
    expect(shownOptions([3, null, { name: 'x' }, { label: 5 }])).toEqual([
      '3',
      'null',
      '{"name":"x"}',
      '{"label":5}',
    ]);
  });

  it('is null for a free answer', () => {
    expect(shownOptions(null)).toBeNull();
    expect(shownOptions(undefined)).toBeNull();
    expect(shownOptions({ label: 'yes' })).toBeNull();
  });
});

describe('optionLabel', () => {
  it('is the string itself or the label', () => {
    expect(optionLabel('yes')).toBe('yes');
    expect(optionLabel({ label: 'no', description: 'Keep it' })).toBe('no');
  });
});

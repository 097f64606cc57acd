import { describe, expect, it } from 'vitest';
import { pinnedDependencies } from './check-packages.mjs';

describe('pinnedDependencies', () => {
  it('names a dependency or peer pinned to one version, as catalog: and workspace:* are once packed', () => {
    const problems = pinnedDependencies({
      dependencies: { zod: 'catalog:', '@x/wire': 'workspace:*', ms: '2.1.3' },
      peerDependencies: { vitest: '=4.1.12' },
    });
    expect(problems).toHaveLength(4);
    expect(problems[0]).toMatch(/dependencies pins "zod" to one version \("catalog:"\)/);
    expect(problems[3]).toMatch(/peerDependencies pins "vitest"/);
  });

  it('accepts ranges', () => {
    const manifest = {
      dependencies: { zod: '^4.1.8', '@x/wire': 'workspace:^' },
      peerDependencies: { 'drizzle-orm': '>=0.45.0 <1', '@x/continuation': '>=0.1.0 <1' },
    };
    expect(pinnedDependencies(manifest)).toEqual([]);
  });
});

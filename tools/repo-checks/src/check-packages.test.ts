import { describe, expect, it } from 'vitest';
import { pinnedDependencies, repositoryProblems } from './check-packages.mjs';

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

describe('repositoryProblems', () => {
  const root = { type: 'git', url: 'git+https://example.org/x.git' };

  it("accepts the root's repository with the package's folder", () => {
    const manifest = { repository: { ...root, directory: 'packages/wire' } };
    expect(repositoryProblems(manifest, 'packages/wire', root)).toEqual([]);
  });

  it('names a missing repository, another URL or another folder', () => {
    const wanted = /"repository" must be .*"directory":"packages\/wire"/;
    expect(repositoryProblems({}, 'packages/wire', root)[0]).toMatch(wanted);
    const elsewhere = {
      repository: { ...root, url: 'https://example.org/y', directory: 'packages/wire' },
    };
    expect(repositoryProblems(elsewhere, 'packages/wire', root)[0]).toMatch(wanted);
    const folder = { repository: { ...root, directory: 'packages/session' } };
    expect(repositoryProblems(folder, 'packages/wire', root)[0]).toMatch(wanted);
  });

  it('asks for the root repository first', () => {
    expect(repositoryProblems({}, 'packages/wire', undefined)).toEqual([
      'the root package.json has no "repository" to name',
    ]);
  });
});

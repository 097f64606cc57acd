import { describe, expect, it } from 'vitest';
import { installClosure, packedInstallLine, tarballName } from './pack-local.mjs';

const published = new Map<string, { manifest: Record<string, unknown> }>([
  ['@x/wire', { manifest: { dependencies: { zod: '^4.1.8' } } }],
  ['@x/kit', { manifest: {} }],
  ['@x/core', { manifest: { dependencies: { '@x/wire': 'workspace:^' } } }],
  [
    '@x/core-pg',
    {
      manifest: {
        dependencies: { '@x/kit': 'workspace:^', 'drizzle-orm': '^0.45.0' },
        peerDependencies: { '@x/core': '>=0.1.0 <1', vitest: '>=4' },
        peerDependenciesMeta: { vitest: { optional: true } },
      },
    },
  ],
  [
    '@x/suite',
    {
      manifest: {
        peerDependencies: { '@x/core': '>=0.1.0 <1' },
        peerDependenciesMeta: { '@x/core': { optional: true } },
      },
    },
  ],
]);

describe('installClosure', () => {
  it('adds what the named packages need of ours, peers included, transitively, after them', () => {
    expect(installClosure(['@x/core-pg'], published)).toEqual([
      '@x/core-pg',
      '@x/core',
      '@x/kit',
      '@x/wire',
    ]);
  });

  it('keeps the named order, adds no optional peer and no package that is not ours', () => {
    expect(installClosure(['@x/wire', '@x/suite', 'zod'], published)).toEqual([
      '@x/wire',
      '@x/suite',
    ]);
  });
});

describe('packedInstallLine', () => {
  it('installs the closure from the packed folder, by file names without versions', () => {
    expect(tarballName('@x/core-pg')).toBe('x-core-pg.tgz');
    expect(packedInstallLine(['@x/core'], published)).toBe(
      'npm install "$X_PACKED"/x-core.tgz "$X_PACKED"/x-wire.tgz',
    );
  });
});

import { parseArgs } from 'node:util';
import { policyVersions } from '@x/executive';
import { usageError } from '../errors.js';
import { plural, printable } from '../terminal/output.js';
import { type Context, globalOptions, withStorage } from './command.js';

/** How many versions `policy versions` lists (the newest). */
const VERSIONS_LIMIT = 100;

/**
 * `runner policy versions`: the versions `policy load` recorded, newest first, each with its
 * number, hash, who loaded it, when and its files; the newest is marked current, since running
 * workers decide with it from their next decision.
 */
export async function policyVersionsList(ctx: Context, args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  if (positionals.length > 0) throw usageError('policy versions takes no arguments');
  return withStorage(ctx, async (storage) => {
    const found = await policyVersions(storage.db, VERSIONS_LIMIT);
    const current = found[0]?.version ?? null;
    const versions = found.map(({ version, policyHash, loadedBy, loadedAt, sources }) => ({
      version,
      policyHash,
      loadedBy,
      loadedAt: loadedAt.toISOString(),
      files: sources.map((source) => source.name),
      current: version === current,
    }));
    const lines = versions.map(
      (v) =>
        `${v.current ? '*' : ' '} ${v.version}  ${v.policyHash}  ${v.loadedBy}  ${v.loadedAt}  ${v.files.join(', ')}`,
    );
    ctx.out.record(
      { type: 'policy-versions', current, versions },
      versions.length === 0
        ? 'no policy version loaded: workers decide with RUNNER_POLICY and the question variables (`runner policy load` records one)'
        : printable(
            [
              `${plural(versions.length, 'policy version')} loaded, newest first (* the one workers decide with):`,
              ...lines,
              ...(versions.length === VERSIONS_LIMIT ? [`  (the newest ${VERSIONS_LIMIT})`] : []),
            ].join('\n'),
          ),
    );
    return 0;
  });
}

import { parseArgs } from 'node:util';
import { recordPolicyVersion } from '@x/executive';
import { readPolicySources } from '@x/policy';
import { usageError } from '../errors.js';
import { compileRunnerPolicies } from '../executive/index.js';
import { osUserName } from '../terminal/os-user.js';
import { type Context, globalOptions, withStorage } from './command.js';

/**
 * `runner policy load FILE_OR_DIR...`: validates the Cedar files as RUNNER_POLICY's are and
 * records them as the newest policy version (its hash, who loaded it, when, and the files'
 * text; in the signed audit chain `policy`). Running workers decide with it from their next
 * decision; a bad file is refused with its line and nothing is recorded.
 */
export async function policyLoad(ctx: Context, args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  if (positionals.length === 0)
    throw usageError('policy load needs FILES (or a DIR) of Cedar policies');
  const sources = await readPolicySources(positionals);
  if (sources.length === 0) throw usageError(`no .cedar file in ${positionals.join(', ')}`);
  // Validated before the database is opened: a refused file changes nothing.
  const policies = compileRunnerPolicies(sources);
  const loadedBy = osUserName() ?? 'unknown';
  return withStorage(ctx, async (storage) => {
    const loaded = await recordPolicyVersion(storage, { policies, sources, loadedBy });
    const files = sources.map((source) => source.name);
    ctx.out.record(
      {
        type: 'policy-loaded',
        version: loaded.version,
        policyHash: loaded.policyHash,
        files,
        loadedBy,
        loadedAt: loaded.loadedAt.toISOString(),
      },
      `loaded policy version ${loaded.version} (${loaded.policyHash}) from ${files.join(', ')} as ${loadedBy}: running workers decide with it from their next decision; questions already asked keep the version that asked them`,
    );
    return 0;
  });
}

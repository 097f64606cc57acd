import { appendAuditEvent } from '@x/askuser';
import type { PolicySet, PolicySource } from '@x/policy';
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { ExecutiveError } from './errors.js';
import { POLICY_AUDIT_CHAIN, type Prior } from './policy-decisions.js';
import type { ExecutiveDatabase as Db, ExecutiveStorage } from './storage.js';

/** One loaded version of the policies, as `x_executive.policy_versions` keeps it. */
export interface PolicyVersion {
  /** 1 for the first loaded, then one more each load. */
  version: number;
  /** The hash of the set as loaded (which the decisions it made record). */
  policyHash: string;
  /** The Cedar files, by name and text. */
  sources: PolicySource[];
  /** Who loaded it. */
  loadedBy: string;
  loadedAt: Date;
}

/**
 * Records `policies` (loaded from `sources`, so already validated) as the newest version, and
 * appends `policy-loaded` to the signed audit chain `policy` in the same transaction. Running
 * gates that follow the versions ({@link ReloadingPolicies}) decide with it from their next
 * decision; questions asked before keep the decision, and the hash, of the version that asked.
 * @throws {ExecutiveError} `usage` for a `loadedBy` that is empty or over 200 characters.
 * @example
 * const sources = await readPolicySources(['policies/']);
 * const policies = loadPolicySet({ tools, sources });
 * const { version } = await recordPolicyVersion(storage, { policies, sources, loadedBy: 'ada' });
 */
export async function recordPolicyVersion(
  storage: Pick<ExecutiveStorage, 'transaction' | 'lockFor' | 'auditKey'>,
  loaded: { policies: PolicySet; sources: readonly PolicySource[]; loadedBy: string },
): Promise<PolicyVersion> {
  const { policies, loadedBy } = loaded;
  if (loadedBy.length === 0 || loadedBy.length > 200) {
    throw new ExecutiveError('usage', 'who loads a policy version is named in 1 to 200 characters');
  }
  const sources = loaded.sources.map(({ name, text }) => ({ name, text }));
  return storage.transaction(async (tx) => {
    // Two loads at once take the next numbers one after the other.
    await storage.lockFor(tx, 'x_executive.policy_versions');
    const [row] = rowsOf(
      await tx.execute(sql`insert into x_executive.policy_versions
          (version, policy_hash, sources, loaded_by)
        select coalesce(max(version), 0) + 1, ${policies.hash}, ${JSON.stringify(sources)}::jsonb,
          ${loadedBy}
        from x_executive.policy_versions
        returning version, loaded_at`),
    );
    const version = Number(row?.version);
    const key = storage.auditKey();
    if (key !== undefined) {
      const files = sources.map((source) => source.name);
      const event = { event: 'policy-loaded', version, policyHash: policies.hash, loadedBy, files };
      await appendAuditEvent(tx, event, { key, chain: POLICY_AUDIT_CHAIN });
    }
    return {
      version,
      policyHash: policies.hash,
      sources,
      loadedBy,
      loadedAt: dateOf(row?.loaded_at),
    };
  });
}

/** The loaded policy versions, newest first (at most `limit`, default 100). */
export async function policyVersions(db: Db, limit = 100): Promise<PolicyVersion[]> {
  const rows = rowsOf(
    await db.execute(sql`select version, policy_hash, sources, loaded_by, loaded_at
      from x_executive.policy_versions order by version desc limit ${limit}`),
  );
  return rows.map(versionOf);
}

/** The newest loaded version whose set had `policyHash`, for explaining its decisions; null: none. */
export async function policyVersionOf(db: Db, policyHash: string): Promise<PolicyVersion | null> {
  const [row] = rowsOf(
    await db.execute(sql`select version, policy_hash, sources, loaded_by, loaded_at
      from x_executive.policy_versions where policy_hash = ${policyHash}
      order by version desc limit 1`),
  );
  return row ? versionOf(row) : null;
}

/** Options of {@link ReloadingPolicies}. */
export interface ReloadingPoliciesOptions {
  /** The set decided with while no version is loaded (the configured one). */
  initial: PolicySet;
  /** Loads a version's files over this process's tools (e.g. `loadPolicySet` of `@x/policy`). */
  compile(sources: PolicySource[]): PolicySet;
}

/**
 * The policies of a gate that follows the loaded versions: pass it as `policies` of
 * `policyGate`. The read a gate makes before each decision also returns the newest version's
 * number and hash; when they differ from the ones held, the version is read and compiled once
 * and the call decided again with it. No loaded version: `initial`.
 * @example
 * const policies = new ReloadingPolicies({
 *   initial: loadPolicySet({ tools }),
 *   compile: (sources) => loadPolicySet({ tools, sources }),
 * });
 */
export class ReloadingPolicies {
  readonly #options: ReloadingPoliciesOptions;
  #held: { version: number; policyHash: string | null; policies: PolicySet };

  constructor(options: ReloadingPoliciesOptions) {
    this.#options = options;
    this.#held = { version: 0, policyHash: null, policies: options.initial };
  }

  /** The set decided with now. */
  get policies(): PolicySet {
    return this.#held.policies;
  }

  /** The version decided with now; 0: none loaded (`initial`). */
  get version(): number {
    return this.#held.version;
  }

  /**
   * Takes the newest version `newest` names (from the gate's read) when it is not the one held.
   * @returns whether the set changed.
   * @throws {ExecutiveError} `unavailable` when the version cannot be read or compiled here.
   */
  async follow(db: Db, newest: Prior['newestVersion']): Promise<boolean> {
    const held = this.#held;
    if (newest === null) {
      if (held.version === 0) return false;
      this.#held = { version: 0, policyHash: null, policies: this.#options.initial };
      return true;
    }
    if (newest.version === held.version && newest.policyHash === held.policyHash) return false;
    const [row] = rowsOf(
      await db.execute(sql`select version, policy_hash, sources, loaded_by, loaded_at
        from x_executive.policy_versions where version = ${newest.version}`),
    );
    if (!row) return false;
    const version = versionOf(row);
    try {
      const policies = this.#options.compile(version.sources);
      this.#held = { version: version.version, policyHash: version.policyHash, policies };
      return true;
    } catch (err) {
      throw new ExecutiveError(
        'unavailable',
        `policy version ${version.version} cannot be loaded here: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  }
}

/** A `policy_versions` row as a {@link PolicyVersion}. */
function versionOf(row: Record<string, unknown>): PolicyVersion {
  const sources = typeof row.sources === 'string' ? JSON.parse(row.sources) : row.sources;
  return {
    version: Number(row.version),
    policyHash: String(row.policy_hash),
    sources: sources as PolicySource[],
    loadedBy: String(row.loaded_by),
    loadedAt: dateOf(row.loaded_at),
  };
}

/** A timestamptz as PGlite or postgres.js hands it back. */
function dateOf(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

import type {
  AuthorizationAnswer,
  CedarValueJson,
  StatefulAuthorizationCall,
} from '@cedar-policy/cedar-wasm/nodejs';
import { cedar } from './cedar.js';
import { combineAsks, reasonOf } from './combine.js';
import type { AskSettings, Decision } from './decision.js';
import { type LoadedSet, type LoadPolicySetOptions, loadSet, setIdOf } from './load.js';
import type { Rule } from './rule.js';
import { ArgumentMismatch } from './tool-schema.js';

/** One gated tool call or question to decide on. */
export interface DecisionInput {
  /** The tool called (a question: its asking tool, e.g. `ask_user`). */
  tool: string;
  /** The call's arguments, checked against the tool's schema; policies read them as `context.input`. */
  input: unknown;
  /** For whom the agent acts (`principal`, `User::"<name>"` in each `Role::"<role>"`); null: nobody (`User::""`). */
  requester: { name: string; roles?: readonly string[] } | null;
  /** The run (`resource`, `Run::"<id>"` with its `conversation` and `kind`). */
  run: { id: string; conversation: string; kind: string };
  /** When (`context.time`: `at`, and the UTC `hour` and ISO `weekday`, Monday 1); default now. */
  time?: Date;
  /** The run's counters so far (`context.counters`); each default 0. */
  counters?: { questions?: number; calls?: number; declines?: number };
}

const ANSWERS_ANYONE: AskSettings = {
  audience: { names: [], roles: [] },
  quorum: null,
  deadline: null,
  remindMs: null,
  escalate: null,
  requesterMayNotAnswer: false,
  severity: null,
};

/**
 * A loaded policy set: Cedar rules validated against the schema generated from the tools,
 * deciding allow, deny or ask for each call. Deciding never throws and never allows on an
 * error: a call that does not match its tool's schema is denied with why; a failure while
 * deciding asks the admins, with the error.
 *
 * @example
 * const policies = loadPolicySet({
 *   tools: [{ name: 'pay', inputSchema: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] } }],
 *   sources: [{ name: 'pay.cedar', text: '@id("small") @reason("under 50") permit (principal, action == Action::"pay", resource) when { context.input.amount < 50 };' }],
 * });
 * const decision = policies.decide({
 *   tool: 'pay',
 *   input: { amount: 20 },
 *   requester: { name: 'ada', roles: ['staff'] },
 *   run: { id: 'run-1', conversation: 'conv-1', kind: 'turn' },
 * });
 * // { outcome: 'allow', reason: 'rule "small": under 50', ruleIds: ['small'], policyHash: 'sha256:…' }
 */
export class PolicySet {
  readonly #load: () => LoadedSet;
  #loaded: { set: LoadedSet; order: ReadonlyMap<string, number> } | undefined;

  /** @internal Use {@link loadPolicySet} or {@link deferPolicySet}. */
  constructor(load: () => LoadedSet) {
    this.#load = load;
  }

  get #set(): LoadedSet {
    return this.#loadOnce().set;
  }

  get #order(): ReadonlyMap<string, number> {
    return this.#loadOnce().order;
  }

  #loadOnce(): { set: LoadedSet; order: ReadonlyMap<string, number> } {
    if (!this.#loaded) {
      const set = this.#load();
      this.#loaded = { set, order: new Map([...set.rules.keys()].map((id, index) => [id, index])) };
    }
    return this.#loaded;
  }

  /** The hash of the set (tools' schemas, files, short form, options): which version decided. */
  get hash(): string {
    return this.#set.hash;
  }

  /** The generated Cedar schema, in Cedar's syntax: what policies may name. */
  get schemaText(): string {
    return this.#set.schemaText;
  }

  /** The rules, in load order: id, outcome, reason, question settings and where each is. */
  get rules(): readonly Rule[] {
    return [...this.#set.rules.values()];
  }

  /**
   * Decides one call: deny before ask before allow, as the README's "Combining rules" says.
   * @throws {PolicyError} only from a {@link deferPolicySet} set that is refused as it loads.
   */
  decide(call: DecisionInput): Decision {
    const policyHash = this.#set.hash;
    try {
      const shape = this.#set.tools.shapes.get(call.tool);
      if (!shape) {
        return {
          outcome: 'deny',
          reason: `no tool ${JSON.stringify(call.tool)} is known to the policies`,
          ruleIds: [],
          policyHash,
        };
      }
      const input = shape.convert(call.input, 'input');
      if (input instanceof ArgumentMismatch) {
        return {
          outcome: 'deny',
          reason: `the arguments do not match the tool's schema: ${input.message}`,
          ruleIds: [],
          policyHash,
        };
      }
      const answer = cedar().statefulIsAuthorized(this.#request(call, input));
      return this.#outcome(answer);
    } catch (err) {
      return this.#askAdmins([], err instanceof Error ? err.message : String(err));
    }
  }

  #request(call: DecisionInput, input: unknown): StatefulAuthorizationCall {
    const at = call.time ?? new Date();
    const requester = call.requester;
    return {
      principal: { type: 'User', id: requester?.name ?? '' },
      action: { type: 'Action', id: call.tool },
      resource: { type: 'Run', id: call.run.id },
      context: {
        input: input as Record<string, CedarValueJson>,
        time: {
          at: { __extn: { fn: 'datetime', arg: at.toISOString() } },
          hour: at.getUTCHours(),
          weekday: ((at.getUTCDay() + 6) % 7) + 1,
        },
        counters: {
          questions: call.counters?.questions ?? 0,
          calls: call.counters?.calls ?? 0,
          declines: call.counters?.declines ?? 0,
        },
      },
      entities: [
        {
          uid: { type: 'User', id: requester?.name ?? '' },
          attrs: {},
          parents: (requester?.roles ?? []).map((role) => ({ type: 'Role', id: role })),
        },
        {
          uid: { type: 'Run', id: call.run.id },
          attrs: { conversation: call.run.conversation, kind: call.run.kind },
          parents: [],
        },
      ],
      preparsedPolicySetId: setIdOf(this.#set.hash, call.tool),
      validateRequest: false,
    };
  }

  #outcome(answer: AuthorizationAnswer): Decision {
    const policyHash = this.#set.hash;
    if (answer.type === 'failure') {
      return this.#askAdmins([], answer.errors.map((e) => e.message).join('; '));
    }
    const { decision, diagnostics } = answer.response;
    // In load order, so that reasons and rule ids read the same on every decision.
    const matched = diagnostics.reason
      .flatMap((id) => this.#set.rules.get(id) ?? [])
      .sort((a, b) => (this.#order.get(a.id) ?? 0) - (this.#order.get(b.id) ?? 0));
    if (decision === 'deny' && matched.length > 0) {
      return {
        outcome: 'deny',
        reason: reasonOf(matched, 'denies it'),
        ruleIds: ids(matched),
        policyHash,
      };
    }
    if (diagnostics.errors.length > 0) {
      const errored = diagnostics.errors.map((e) => `rule "${e.policyId}": ${e.error.message}`);
      return this.#askAdmins(
        diagnostics.errors.map((e) => e.policyId),
        errored.join('; '),
      );
    }
    const asks = matched.filter((rule) => rule.outcome === 'ask');
    if (asks.length > 0) {
      const reason = reasonOf(asks, 'asks');
      return {
        outcome: 'ask',
        reason,
        ruleIds: ids(asks),
        policyHash,
        ask: combineAsks(asks),
        error: null,
      };
    }
    if (matched.length > 0) {
      return {
        outcome: 'allow',
        reason: reasonOf(matched, 'allows it'),
        ruleIds: ids(matched),
        policyHash,
      };
    }
    const reason = 'no rule matched';
    return this.#set.unmatched === 'deny'
      ? { outcome: 'deny', reason, ruleIds: [], policyHash }
      : { outcome: 'ask', reason, ruleIds: [], policyHash, ask: ANSWERS_ANYONE, error: null };
  }

  // Fail closed: the admins answer, the requester never does, and nothing is applied unanswered.
  #askAdmins(ruleIds: string[], error: string): Decision {
    return {
      outcome: 'ask',
      reason: `deciding failed, so the admins are asked: ${error}`,
      ruleIds,
      policyHash: this.#set.hash,
      ask: {
        ...ANSWERS_ANYONE,
        audience: { names: [], roles: [this.#set.adminRole] },
        requesterMayNotAnswer: true,
      },
      error,
    };
  }
}

function ids(rules: readonly Rule[]): string[] {
  return rules.map((rule) => rule.id);
}

/**
 * Loads a policy set: generates the Cedar schema from `tools`, compiles `shortForm` into rules,
 * parses and validates every file against the schema, and checks every rule's annotations.
 * Anything wrong refuses the whole set with a {@link PolicyError} naming the file, line and
 * Cedar's message; nothing half-loaded is returned.
 */
export function loadPolicySet(options: LoadPolicySetOptions): PolicySet {
  const set = loadSet(options);
  return new PolicySet(() => set);
}

/**
 * {@link loadPolicySet}, done on the set's first use (a decision, its hash, rules or schema)
 * rather than now: for a process that may decide nothing, which then never starts Cedar (a
 * quarter of a second). What is refused is refused at that first use, by a {@link PolicyError}
 * thrown from it, so defer only a set known to load (e.g. one of your own tools and no files a
 * person wrote) and load a person's files with {@link loadPolicySet} where they are given.
 *
 * @example
 * const policies = deferPolicySet({ tools: [{ name: 'pay', inputSchema: { type: 'object' } }] });
 * // Cedar starts here, at the first decision, if ever.
 * policies.decide({ tool: 'pay', input: {}, requester: null, run: { id: 'r', conversation: 'c', kind: 'turn' } });
 */
export function deferPolicySet(options: LoadPolicySetOptions): PolicySet {
  return new PolicySet(() => loadSet(options));
}

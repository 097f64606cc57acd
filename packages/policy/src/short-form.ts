import type { DefaultAnswer } from './decision.js';

/**
 * The six runner variables' short form, as parsed pairs by tool name (nothing is read from
 * the environment here): `RUNNER_AUDIENCE`, `RUNNER_REQUESTER_MAY_NOT_APPROVE` (`*`: every
 * tool), `RUNNER_DEADLINE`, `RUNNER_REMIND`, `RUNNER_ESCALATE`, `RUNNER_QUORUM`.
 */
export interface ShortForm {
  /** Tool -> the roles any one of which may answer (`approve=finance`). */
  audience?: Readonly<Record<string, readonly string[]>>;
  /** The tools whose requester may not answer, or `*` (`approve`). */
  requesterMayNotApprove?: Iterable<string>;
  /** Tool -> how long it waits and the default then (`approve=24h:decline`). */
  deadline?: Readonly<Record<string, { ms: number; answer: DefaultAnswer }>>;
  /** Tool -> when its audience is reminded, in ms (`approve=4h`). */
  remind?: Readonly<Record<string, number>>;
  /** Tool -> when its audience widens and to whom (`approve=8h:lead+@ada`). */
  escalate?: Readonly<
    Record<string, { ms: number; names: readonly string[]; roles: readonly string[] }>
  >;
  /** Tool -> M approvals and D declines (`approve=2:1`). */
  quorum?: Readonly<Record<string, { approvals: number; declines: number }>>;
}

/**
 * The short form as Cedar rules of the same set: one asking rule per tool it names
 * (`@id("short-form:TOOL")`), and one for every tool when `requesterMayNotApprove` holds `*`.
 * A value out of range becomes an annotation the loader refuses, with the rule's id.
 *
 * @example
 * ```ts
 * compileShortForm({ audience: { approve: ['finance'] }, quorum: { approve: { approvals: 2, declines: 1 } } });
 * // @id("short-form:approve")
 * // @ask
 * // @audience("finance")
 * // @quorum("2:1")
 * // permit (principal, action == Action::"approve", resource);
 * ```
 */
export function compileShortForm(short: ShortForm): string {
  const barred = new Set(short.requesterMayNotApprove ?? []);
  const tools = new Set([
    ...Object.keys(short.audience ?? {}),
    ...Object.keys(short.deadline ?? {}),
    ...Object.keys(short.remind ?? {}),
    ...Object.keys(short.escalate ?? {}),
    ...Object.keys(short.quorum ?? {}),
    ...[...barred].filter((tool) => tool !== '*'),
  ]);
  const rules = [...tools].sort().map((tool) => {
    const lines = [`@id(${cedarString(`short-form:${tool}`)})`, '@ask'];
    const audience = short.audience?.[tool];
    if (audience) lines.push(`@audience(${cedarString(audience.join('+'))})`);
    const quorum = short.quorum?.[tool];
    if (quorum) lines.push(`@quorum(${cedarString(`${quorum.approvals}:${quorum.declines}`)})`);
    const deadline = short.deadline?.[tool];
    if (deadline) {
      lines.push(`@deadline(${cedarString(durationText(deadline.ms))})`);
      const { action, content } = deadline.answer;
      lines.push(`@default(${cedarString(action === 'accept' ? `accept:${content}` : action)})`);
    }
    const remind = short.remind?.[tool];
    if (remind !== undefined) lines.push(`@remind(${cedarString(durationText(remind))})`);
    const escalate = short.escalate?.[tool];
    if (escalate) {
      const who = [...escalate.roles, ...escalate.names.map((name) => `@${name}`)].join('+');
      lines.push(`@escalate(${cedarString(`${durationText(escalate.ms)}:${who}`)})`);
    }
    if (barred.has(tool)) lines.push('@requesterMayNotAnswer');
    lines.push(`permit (principal, action == Action::${cedarString(tool)}, resource);`);
    return lines.join('\n');
  });
  if (barred.has('*')) {
    rules.push(
      [
        '@id("short-form:*")',
        '@ask',
        '@requesterMayNotAnswer',
        'permit (principal, action, resource);',
      ].join('\n'),
    );
  }
  return rules.map((rule) => `${rule}\n`).join('\n');
}

/** Milliseconds in the largest unit that divides them (`86400000` -> `1d`); not positive: as given. */
function durationText(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms <= 0) return `${ms}ms`;
  const units: [string, number][] = [
    ['w', 604_800_000],
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  const unit = units.find(([, size]) => ms % size === 0);
  return unit ? `${ms / unit[1]}${unit[0]}` : `${ms}ms`;
}

/** A Cedar string literal: quotes, backslashes and control characters escaped. */
function cedarString(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping them is the point.
  const escaped = text.replace(/[\\"\u0000-\u001f\u007f]/g, (c) =>
    c === '\\' || c === '"' ? `\\${c}` : `\\u{${c.charCodeAt(0).toString(16)}}`,
  );
  return `"${escaped}"`;
}

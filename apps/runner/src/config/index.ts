import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type * as Executive from '@x/executive';
import type { QuestionRules } from '@x/executive';
import type * as Notify from '@x/notify';
import type { NotifyRule } from '@x/notify';
import type * as Policy from '@x/policy';
import { usageError } from '../errors.js';
import { connectTimeoutSeconds, parseDatabaseUrl } from './database-url.js';

// The packages load when a value given needs them, not with this module: `--help`, a usage
// error and a command sent to serve start without their hundreds of modules.
const load = createRequire(import.meta.url);
const durationMs = (text: string) => (load('@x/policy') as typeof Policy).durationMs(text);

/** The environment settings are read from: `process.env`, or a test's own. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A kind of value: what it accepts, in words, and how a variable's text becomes one. */
export interface Kind<T> {
  /** What the kind accepts, as an error message and the help say it: "a whole number ≥ 1". */
  readonly accepts: string;
  /** The value of `text`, or undefined when the kind does not accept it. */
  readonly parse: (text: string, name: string) => T | undefined;
  /** False for kinds whose text may hold a password: a refusal does not repeat it. */
  readonly echo?: boolean;
}

/** One environment variable the runner reads. */
export interface Variable<T, D extends T | undefined = T | undefined> {
  readonly name: string;
  readonly kind: Kind<T>;
  /** The value when the variable is unset or empty. */
  readonly default: D;
  /** The default as the help says it, when it is not the value itself. */
  readonly defaultText?: string;
  /** What it sets, for `runner help environment`; none for variables of the system or a launcher. */
  readonly description?: string;
}

/** A whole number from `min` (to `max`, when given). */
function wholeNumber(min: number, max?: number): Kind<number> {
  return {
    accepts: max === undefined ? `a whole number ≥ ${min}` : `a whole number from ${min} to ${max}`,
    parse: (text) => {
      const value = Number(text);
      const whole = text.trim() !== '' && Number.isInteger(value);
      return whole && value >= min && (max === undefined || value <= max) ? value : undefined;
    },
  };
}

/** Any text that is not empty. */
export function text(accepts: string): Kind<string> {
  return { accepts, parse: (given) => given };
}

/** One of `values`, exactly. */
export function oneOf<const V extends string>(...values: V[]): Kind<V> {
  return {
    accepts: values.map((v) => `"${v}"`).join(', '),
    parse: (given) => values.find((v) => v === given),
  };
}

/** What `first` accepts, else what `second` accepts. */
export function either<A, B>(first: Kind<A>, second: Kind<B>): Kind<A | B> {
  return {
    accepts: `${first.accepts} or ${second.accepts}`,
    parse: (given, name) => first.parse(given, name) ?? second.parse(given, name),
  };
}

/** Set to anything but the empty text: on. */
export const flag: Kind<boolean> = { accepts: 'any value', parse: () => true };

/** An http:// or https:// URL. */
const httpUrl: Kind<string> = {
  accepts: 'an http:// or https:// URL',
  echo: false,
  parse: (given) => {
    const protocol = URL.canParse(given) ? new URL(given).protocol : '';
    return protocol === 'http:' || protocol === 'https:' ? given : undefined;
  },
};

/**
 * A PostgreSQL URL: refused with a message of its own naming the part that is wrong
 * (see {@link parseDatabaseUrl}), never repeating what may be a password.
 */
const postgresUrl: Kind<string> = {
  accepts: 'postgres://USER@HOST:PORT/DATABASE',
  echo: false,
  parse: (given, name) => {
    parseDatabaseUrl(name, given);
    return given;
  },
};

/**
 * Who may answer the questions of each human tool: `TOOL=ROLE` pairs separated by commas
 * (`approve=finance,approve=ops`), as tool name -> the roles any one of which may answer.
 */
const audiencePolicy: Kind<Readonly<Record<string, string[]>>> = {
  accepts: 'TOOL=ROLE pairs separated by commas, e.g. approve=finance',
  parse: (given) => {
    const policy: Record<string, string[]> = {};
    for (const pair of given.split(',')) {
      const match = /^\s*([a-z_][a-z0-9_]*)=([a-z][a-z0-9_-]*)\s*$/.exec(pair);
      if (!match) return undefined;
      const [, tool = '', role = ''] = match;
      policy[tool] = [...new Set([...(policy[tool] ?? []), role])];
    }
    return policy;
  },
};

/**
 * Human tools by name, separated by commas (`approve,ask_user`), or `*` for every one of
 * them: as the set of names, `*` kept as itself.
 */
const toolNames: Kind<ReadonlySet<string>> = {
  accepts: 'tool names separated by commas, or *, e.g. approve',
  parse: (given) => {
    const names = given.split(',').map((name) => name.trim());
    const valid = names.every((name) => name === '*' || /^[a-z_][a-z0-9_]*$/.test(name));
    return valid ? new Set(names) : undefined;
  },
};

/**
 * `TOOL=…` pairs separated by commas, each matched by `pattern` (the tool its first group)
 * and made by `build`; undefined when one does not fit.
 */
function toolPairs<T>(
  given: string,
  pattern: RegExp,
  build: (match: RegExpExecArray) => T | undefined,
): Record<string, T> | undefined {
  const policy: Record<string, T> = {};
  for (const pair of given.split(',')) {
    const match = pattern.exec(pair);
    const rule = match ? build(match) : undefined;
    if (!match || rule === undefined) return undefined;
    policy[match[1] ?? ''] = rule;
  }
  return policy;
}

/** What a deadline policy sets for one human tool: how long its questions wait, and the default. */
type DeadlineRule = NonNullable<QuestionRules['deadline']>;

/**
 * How long the questions of each human tool wait, and what is applied when nobody answered
 * in time: `TOOL=DURATION:DEFAULT` pairs separated by commas, DEFAULT one of `decline`,
 * `cancel` or `accept:TEXT` (`approve=24h:decline,ask_user=2h:accept:go on without me`).
 */
const deadlinePolicy: Kind<Readonly<Record<string, DeadlineRule>>> = {
  accepts:
    'TOOL=DURATION:DEFAULT pairs separated by commas, DEFAULT decline, cancel or accept:TEXT, e.g. approve=24h:decline',
  parse: (given) =>
    toolPairs(
      given,
      /^\s*([a-z_][a-z0-9_]*)=(\d+\s*[a-z]+):(decline|cancel|accept:(.*))\s*$/,
      (m) => {
        const ms = durationMs(m[2] ?? '');
        if (ms === undefined || ms <= 0) return undefined;
        const [, , , action = '', content] = m;
        return {
          ms,
          answer:
            content === undefined
              ? { action: action as 'decline' | 'cancel', content: '' }
              : { action: 'accept' as const, content },
        };
      },
    ),
};

/** `TOOL=DURATION` pairs separated by commas (`approve=4h,ask_user=30m`), as tool -> ms. */
const remindPolicy: Kind<Readonly<Record<string, number>>> = {
  accepts: 'TOOL=DURATION pairs separated by commas, e.g. approve=4h',
  parse: (given) =>
    toolPairs(given, /^\s*([a-z_][a-z0-9_]*)=(\d+\s*[a-z]+)\s*$/, (m) => {
      const ms = durationMs(m[2] ?? '');
      return ms === undefined || ms <= 0 ? undefined : ms;
    }),
};

/** What an escalation policy sets for one human tool: after how long, and whom it adds. */
type EscalateRule = NonNullable<QuestionRules['escalate']>;

/**
 * When each human tool's questions widen their audience, and to whom: `TOOL=DURATION:WHO`
 * pairs separated by commas, WHO roles and `@names` joined by `+` (`approve=8h:lead+@ada`).
 */
const escalatePolicy: Kind<Readonly<Record<string, EscalateRule>>> = {
  accepts:
    'TOOL=DURATION:WHO pairs separated by commas, WHO roles and @names joined by +, e.g. approve=8h:lead+@ada',
  parse: (given) =>
    toolPairs(given, /^\s*([a-z_][a-z0-9_]*)=(\d+\s*[a-z]+):(\S+)\s*$/, (m) => {
      const ms = durationMs(m[2] ?? '');
      const who = (m[3] ?? '').split('+');
      if (ms === undefined || ms <= 0) return undefined;
      if (!who.every((w) => /^@?[A-Za-z0-9][A-Za-z0-9_.@-]*$/.test(w))) return undefined;
      return {
        ms,
        names: who.filter((w) => w.startsWith('@')).map((w) => w.slice(1)),
        roles: who.filter((w) => !w.startsWith('@')),
      };
    }),
};

/** How many distinct approvals (and declines) resolve one human tool's questions. */
type QuorumRule = NonNullable<QuestionRules['quorum']>;

/**
 * The quorum of each human tool's questions: `TOOL=M` or `TOOL=M:D` pairs separated by
 * commas, M approvals of its audience to accept, D declines to decline (default 1):
 * `approve=2`, `approve=3:2`.
 */
const quorumPolicy: Kind<Readonly<Record<string, QuorumRule>>> = {
  accepts: 'TOOL=M or TOOL=M:D pairs separated by commas (M approvals, D declines), e.g. approve=2',
  parse: (given) =>
    toolPairs(given, /^\s*([a-z_][a-z0-9_]*)=([1-9]\d{0,2})(?::([1-9]\d{0,2}))?\s*$/, (m) => ({
      approvals: Number(m[2]),
      declines: Number(m[3] ?? 1),
    })),
};

/**
 * Which events go to which channel: `CHANNEL=KIND[?FILTER=VALUE&...]` rules separated by
 * commas, KIND an event kind or a prefix ending in `*`, filters `tool`, `priority` and
 * `audience` (`webhook=question.*?tool=approve&priority=high,webhook=run.failed`).
 */
export const notifyRuleList: Kind<readonly NotifyRule[]> = {
  accepts:
    'CHANNEL=KIND[?tool=T&priority=P&audience=R] rules separated by commas, e.g. webhook=question.*?tool=approve',
  // A rule's kind is one of the executive's events (or a prefix of them).
  parse: (given) =>
    (load('@x/notify') as typeof Notify).parseNotifyRules(
      given,
      (load('@x/executive') as typeof Executive).EVENT_KINDS,
    ),
};

/**
 * Webhook signing secrets (`whsec_` and base64), one or two separated by a space: during a
 * rotation both sign, so that a receiver that knows either verifies.
 */
const webhookSecrets: Kind<readonly Buffer[]> = {
  accepts: 'one or two whsec_BASE64 secrets separated by a space',
  echo: false,
  parse: (given) => {
    const secrets = given.trim().split(/\s+/);
    if (secrets.length > 2) return undefined;
    const keys = secrets.map((s) =>
      /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s) ? Buffer.from(s.slice(6), 'base64') : undefined,
    );
    return keys.every((k) => k !== undefined && k.length >= 16) ? (keys as Buffer[]) : undefined;
  },
};

/** An smtp:// or smtps:// URL, user and password in it when the server needs them. */
const smtpUrl: Kind<string> = {
  accepts: 'an smtp:// or smtps:// URL, e.g. smtp://user:password@mail.example.com:587',
  echo: false,
  parse: (given) => {
    const protocol = URL.canParse(given) ? new URL(given).protocol : '';
    return protocol === 'smtp:' || protocol === 'smtps:' ? given : undefined;
  },
};

/**
 * Slack users and the operators they answer as: `SLACK_USER_ID=OPERATOR` pairs separated by
 * commas (`U012AB3CD=ada`), as Slack user id -> operator name.
 */
const slackUsers: Kind<Readonly<Record<string, string>>> = {
  accepts: 'SLACK_USER_ID=OPERATOR pairs separated by commas, e.g. U012AB3CD=ada',
  parse: (given) => {
    const map: Record<string, string> = {};
    for (const pair of given.split(',')) {
      const match = /^\s*([A-Z0-9]+)=([A-Za-z0-9][\w.@-]{0,99})\s*$/.exec(pair);
      if (!match) return undefined;
      map[match[1] ?? ''] = match[2] ?? '';
    }
    return map;
  },
};

/** Email addresses separated by commas. */
const emailAddresses: Kind<readonly string[]> = {
  accepts: 'email addresses separated by commas',
  parse: (given) => {
    const list = given.split(',').map((a) => a.trim());
    return list.every((a) => /^[^\s@,<>]+@[^\s@,<>]+$/.test(a)) ? list : undefined;
  },
};

/** A claim of a token, or a dotted path into one: `groups`, `realm_access.roles`. */
const claimPath: Kind<string> = {
  accepts: 'a claim name, or a dotted path like realm_access.roles',
  parse: (given) => (/^[^.\s]+(\.[^.\s]+)*$/.test(given) ? given : undefined),
};

/**
 * How an identity provider's roles or groups become the runner's: `VALUE=ROLE` pairs
 * separated by commas (`ops-admins=admin,approvers=operator`), as claim value -> roles.
 */
export const roleMap: Kind<Readonly<Record<string, string[]>>> = {
  accepts: 'VALUE=ROLE pairs separated by commas, e.g. ops-admins=admin,approvers=operator',
  parse: (given) => {
    const map: Record<string, string[]> = {};
    for (const pair of given.split(',')) {
      const match = /^\s*([^=\s][^=]*?)\s*=\s*([a-z][a-z0-9_-]{0,49})\s*$/.exec(pair);
      if (!match) return undefined;
      const [, value = '', role = ''] = match;
      map[value] = [...new Set([...(map[value] ?? []), role])];
    }
    return map;
  },
};

/** The audit log's signing key: at least 16 bytes, never repeated in a refusal. */
export const auditKey: Kind<string> = {
  accepts: 'at least 16 bytes',
  echo: false,
  parse: (given) => (Buffer.byteLength(given) >= 16 ? given : undefined),
};

/** Addresses and subnets (`10.0.0.0/8`, `::1`), separated by commas. */
const addressList: Kind<readonly string[]> = {
  accepts: 'IP addresses or subnets like 10.0.0.0/8, separated by commas',
  parse: (given) => {
    const entries = given.split(',').map((entry) => entry.trim());
    const valid = (entry: string) => {
      const [address = '', bits, extra] = entry.split('/');
      const family = isIP(address);
      if (family === 0 || extra !== undefined) return false;
      if (bits === undefined) return true;
      const n = Number(bits);
      return /^\d+$/.test(bits) && n <= (family === 4 ? 32 : 128);
    };
    return entries.length > 0 && entries.every(valid) ? entries : undefined;
  },
};

/** A duration of at least a second, in ms (a bare whole number is ms, as the *_MS variables). */
export const duration: Kind<number> = {
  accepts: 'a duration like 30s, 15m or 8h (a bare number: ms) of at least 1s',
  parse: (given) => {
    const ms = /^\d+$/.test(given.trim()) ? Number(given) : durationMs(given);
    return ms !== undefined && ms >= 1000 ? ms : undefined;
  },
};

/** Seconds above 0, up to an hour. */
export const seconds: Kind<number> = {
  accepts: 'a number of seconds above 0 and up to 3600',
  parse: (given) => connectTimeoutSeconds(given),
};

// Keeps each declaration's own value and default types (a default of undefined stays optional).
function variable<T, const D extends T | undefined>(v: Variable<T, D>): Variable<T, D> {
  return v;
}

/** Every environment variable the runner reads, in the order `runner help environment` lists them. */
export const VARIABLES = {
  DATABASE_URL: variable({
    name: 'DATABASE_URL',
    kind: postgresUrl,
    default: undefined,
    defaultText: 'unset: the embedded default',
    description:
      'keep everything in PostgreSQL, where many runner processes can work at once; the URL must name a database',
  }),
  RUNNER_DATA: variable({
    name: 'RUNNER_DATA',
    kind: text('a folder'),
    default: '.runner',
    description: "the embedded default's data folder, as --data",
  }),
  RUNNER_MODEL: variable({
    name: 'RUNNER_MODEL',
    kind: text('a model id'),
    default: 'scripted:trip',
    description: 'the model, as --model',
  }),
  RUNNER_TOKEN: variable({
    name: 'RUNNER_TOKEN',
    kind: text('a token'),
    default: undefined,
    defaultText: 'none',
    description: "serve's token, as --token",
  }),
  RUNNER_PUBLIC_URL: variable({
    name: 'RUNNER_PUBLIC_URL',
    kind: httpUrl,
    default: undefined,
    defaultText: 'none',
    description:
      "the address people open serve's page at, as --public-url: an https:// one (a TLS proxy in front) marks the session cookie Secure",
  }),
  RUNNER_SESSION_TTL: variable({
    name: 'RUNNER_SESSION_TTL',
    kind: duration,
    default: 8 * 3600e3,
    defaultText: '8h',
    description: "how long a sign-in on serve's page lasts before the operator signs in again",
  }),
  RUNNER_SIGN_IN_FAILURES: variable({
    name: 'RUNNER_SIGN_IN_FAILURES',
    kind: wholeNumber(1),
    default: 20,
    description:
      'failed sign-ins to serve from one source address within RUNNER_SIGN_IN_WINDOW before it gets 429',
  }),
  RUNNER_SIGN_IN_FAILURES_PER_NAME: variable({
    name: 'RUNNER_SIGN_IN_FAILURES_PER_NAME',
    kind: wholeNumber(1),
    default: 5,
    description:
      'failed sign-ins as one operator within RUNNER_SIGN_IN_WINDOW before signing in as them gets 429',
  }),
  RUNNER_SIGN_IN_WINDOW: variable({
    name: 'RUNNER_SIGN_IN_WINDOW',
    kind: duration,
    default: 15 * 60e3,
    defaultText: '15m',
    description: 'the window the failed sign-ins are counted in',
  }),
  RUNNER_MAX_CONNECTIONS: variable({
    name: 'RUNNER_MAX_CONNECTIONS',
    kind: wholeNumber(1),
    default: 512,
    description:
      'connections serve keeps open at once, as --max-connections (event streams count): one more is answered 503 and closed',
  }),
  RUNNER_HEADERS_TIMEOUT: variable({
    name: 'RUNNER_HEADERS_TIMEOUT',
    kind: duration,
    default: 10e3,
    defaultText: '10s',
    description:
      "how long a request's headers may take to reach serve (from its first byte, or from the connection), as --headers-timeout: then 408 and the connection closes",
  }),
  RUNNER_BODY_TIMEOUT: variable({
    name: 'RUNNER_BODY_TIMEOUT',
    kind: duration,
    default: 30e3,
    defaultText: '30s',
    description:
      "how long a request's body may take to reach serve after its headers' time, as --body-timeout: then 408 and the connection closes",
  }),
  RUNNER_IDLE_TIMEOUT: variable({
    name: 'RUNNER_IDLE_TIMEOUT',
    kind: duration,
    default: 5e3,
    defaultText: '5s',
    description:
      'how long a kept-alive connection to serve may wait idle for its next request, as --idle-timeout',
  }),
  RUNNER_TRUST_PROXY: variable({
    name: 'RUNNER_TRUST_PROXY',
    kind: addressList,
    default: undefined,
    defaultText: 'none',
    description:
      'the proxies in front of serve whose X-Forwarded-For names the client, as --trust-proxy: then failed sign-ins are counted (and audited) per client, not per proxy',
  }),
  RUNNER_OPERATOR: variable({
    name: 'RUNNER_OPERATOR',
    kind: text('a name'),
    default: undefined,
    defaultText: 'the OS user',
    description: 'who answers through serve, as --operator',
  }),
  RUNNER_OIDC_ISSUER: variable({
    name: 'RUNNER_OIDC_ISSUER',
    kind: httpUrl,
    default: undefined,
    defaultText: 'none: operators sign in with keys only',
    description:
      'an OpenID Connect provider whose users sign in to serve: bearer JWTs it signs, and the page through /auth/oidc/login',
  }),
  RUNNER_OIDC_AUDIENCE: variable({
    name: 'RUNNER_OIDC_AUDIENCE',
    kind: text('an audience'),
    default: undefined,
    defaultText: 'RUNNER_OIDC_CLIENT_ID',
    description: "the `aud` a bearer JWT must name to sign in to serve's API",
  }),
  RUNNER_OIDC_CLIENT_ID: variable({
    name: 'RUNNER_OIDC_CLIENT_ID',
    kind: text('a client id'),
    default: undefined,
    defaultText: 'none: no sign-in from the page',
    description: "the page's client at the provider (authorization code with PKCE)",
  }),
  RUNNER_OIDC_CLIENT_SECRET: variable({
    name: 'RUNNER_OIDC_CLIENT_SECRET',
    kind: text('a secret'),
    default: undefined,
    defaultText: 'none: a public client',
    description: "the page's client secret, for a confidential client",
  }),
  RUNNER_OIDC_REDIRECT_URI: variable({
    name: 'RUNNER_OIDC_REDIRECT_URI',
    kind: httpUrl,
    default: undefined,
    defaultText:
      'PUBLIC-URL/auth/oidc/callback with --public-url (RUNNER_PUBLIC_URL), else http://HOST/auth/oidc/callback, HOST as the request names it',
    description: 'where the provider sends the browser back: register this URL with the provider',
  }),
  RUNNER_OIDC_ROLES_CLAIM: variable({
    name: 'RUNNER_OIDC_ROLES_CLAIM',
    kind: claimPath,
    default: 'groups',
    description: "the claim holding a user's roles or groups, a list or one value",
  }),
  RUNNER_OIDC_ROLE_MAP: variable({
    name: 'RUNNER_OIDC_ROLE_MAP',
    kind: roleMap,
    default: undefined,
    defaultText: 'none: each value is the role of its name',
    description:
      "the runner's roles of each value of the roles claim (admin, operator, viewer, or an audience role); values it does not name give none",
  }),
  RUNNER_OIDC_NAME_CLAIM: variable({
    name: 'RUNNER_OIDC_NAME_CLAIM',
    kind: claimPath,
    default: 'preferred_username',
    description: 'the claim that names who answered, falling back to `sub`',
  }),
  RUNNER_AUDIENCE: variable({
    name: 'RUNNER_AUDIENCE',
    kind: audiencePolicy,
    default: undefined,
    defaultText: 'none: any operator answers any question',
    description:
      "who may answer each human tool's questions (ask_user, approve): an operator with one of the roles named for it, or an admin",
  }),
  RUNNER_REQUESTER_MAY_NOT_APPROVE: variable({
    name: 'RUNNER_REQUESTER_MAY_NOT_APPROVE',
    kind: toolNames,
    default: undefined,
    defaultText: 'none: a requester may answer their own questions',
    description:
      "the human tools whose questions their requester (exec --requester) may not answer, separation of duties: the store refuses that person's answer (403 forbidden)",
  }),
  RUNNER_DEADLINE: variable({
    name: 'RUNNER_DEADLINE',
    kind: deadlinePolicy,
    default: undefined,
    defaultText: 'none: a question waits until it is answered',
    description:
      "how long each human tool's questions (ask_user, approve) wait, and the default applied when nobody answered in time (the outcome expired)",
  }),
  RUNNER_REMIND: variable({
    name: 'RUNNER_REMIND',
    kind: remindPolicy,
    default: undefined,
    defaultText: 'none: nobody is reminded',
    description:
      "after how long a human tool's question still unanswered reminds its audience: once, as a question-reminded event and audit entry",
  }),
  RUNNER_ESCALATE: variable({
    name: 'RUNNER_ESCALATE',
    kind: escalatePolicy,
    default: undefined,
    defaultText: 'none: the audience stays as asked',
    description:
      "after how long a human tool's question still unanswered adds these roles and @names to its audience: once, as a question-escalated event and audit entry",
  }),
  RUNNER_QUORUM: variable({
    name: 'RUNNER_QUORUM',
    kind: quorumPolicy,
    default: undefined,
    defaultText: 'none: the first answer resolves a question',
    description:
      "how many distinct people of a human tool's audience must accept its question (M of N), and how many declines decline it (default 1); each answer is recorded, the run resumes at the M-th",
  }),
  RUNNER_POLICY: variable({
    name: 'RUNNER_POLICY',
    kind: text('a .cedar file or a folder of them'),
    default: undefined,
    defaultText: 'none: the six variables above alone decide',
    description:
      'Cedar policies that decide each gated call and question with its arguments: allow (no person), deny (the model reads why) or ask (their annotations say who, how many, by when); loaded at start, a bad file refused with its line',
  }),
  RUNNER_POLICY_SHADOW: variable({
    name: 'RUNNER_POLICY_SHADOW',
    kind: text('a .cedar file or a folder of them'),
    default: undefined,
    defaultText: 'none',
    description:
      'candidate Cedar policies run beside the active ones: each decision also records what they would have decided, with no effect (runner policy shadow lists where they disagree); loaded at start, a bad file refused with its line',
  }),
  RUNNER_DENIAL_WINDOW_MS: variable({
    name: 'RUNNER_DENIAL_WINDOW_MS',
    kind: wholeNumber(0),
    default: 60_000,
    description:
      'how long the same call (tool and arguments) in a conversation, once declined or expired, is denied again without asking, in ms; 0: never',
  }),
  RUNNER_MAX_QUESTIONS: variable({
    name: 'RUNNER_MAX_QUESTIONS',
    kind: wholeNumber(1),
    default: 100,
    description: 'the most questions the policies ask in one run; past it the run fails',
  }),
  RUNNER_WEBHOOK_URL: variable({
    name: 'RUNNER_WEBHOOK_URL',
    kind: httpUrl,
    default: undefined,
    defaultText: 'none: no webhook',
    description:
      'where wake and serve POST notifications (Standard Webhooks), at least once, with the event id as webhook-id',
  }),
  RUNNER_WEBHOOK_SECRET: variable({
    name: 'RUNNER_WEBHOOK_SECRET',
    kind: webhookSecrets,
    default: undefined,
    defaultText: 'none: unsigned',
    description:
      "the webhook's signing secret; give the new one and the old one during a rotation, both sign",
  }),
  RUNNER_SMTP_URL: variable({
    name: 'RUNNER_SMTP_URL',
    kind: smtpUrl,
    default: undefined,
    defaultText: 'none: no email',
    description: 'the SMTP server wake and serve send email notifications through',
  }),
  RUNNER_EMAIL_TO: variable({
    name: 'RUNNER_EMAIL_TO',
    kind: emailAddresses,
    default: undefined,
    defaultText: 'none',
    description: 'who gets the email notifications',
  }),
  RUNNER_EMAIL_FROM: variable({
    name: 'RUNNER_EMAIL_FROM',
    kind: text('an email address, or a name and <address>'),
    default: 'runner@localhost',
    description: 'the sender of the email notifications',
  }),
  RUNNER_SLACK_TOKEN: variable({
    name: 'RUNNER_SLACK_TOKEN',
    kind: { ...text('a bot token'), echo: false },
    default: undefined,
    defaultText: 'none: no Slack',
    description: 'the Slack bot token wake and serve post questions with (chat.postMessage)',
  }),
  RUNNER_SLACK_CHANNEL: variable({
    name: 'RUNNER_SLACK_CHANNEL',
    kind: text('a channel id'),
    default: undefined,
    defaultText: 'none',
    description: 'the Slack channel the questions are posted to',
  }),
  RUNNER_SLACK_API_URL: variable({
    name: 'RUNNER_SLACK_API_URL',
    kind: httpUrl,
    default: 'https://slack.com/api/',
    description: "Slack's Web API",
  }),
  RUNNER_SLACK_SIGNING_SECRET: variable({
    name: 'RUNNER_SLACK_SIGNING_SECRET',
    kind: { ...text('a secret'), echo: false },
    default: undefined,
    defaultText: 'none: serve takes no Slack interactions',
    description:
      "the Slack app's signing secret: serve's /slack/interactions answers a button only under a valid v0 signature of the last 5 minutes",
  }),
  RUNNER_SLACK_USERS: variable({
    name: 'RUNNER_SLACK_USERS',
    kind: slackUsers,
    default: undefined,
    defaultText: 'none: a Slack user answers as the operator named by their Slack email',
    description:
      "the operator each Slack user answers as; the question's audience and the audit log apply as on the page",
  }),
  RUNNER_DECISION_KEY: variable({
    name: 'RUNNER_DECISION_KEY',
    kind: auditKey,
    default: undefined,
    defaultText: 'none: emails carry no decision links',
    description:
      "the key that signs email decision links (one per answer, per recipient, used once, opened on serve's page at RUNNER_PUBLIC_URL)",
  }),
  RUNNER_NOTIFY: variable({
    name: 'RUNNER_NOTIFY',
    kind: notifyRuleList,
    default: undefined,
    defaultText:
      'webhook=* when RUNNER_WEBHOOK_URL is set, and email=question.created when RUNNER_SMTP_URL is',
    description:
      'which events (question.created, .reminded, .escalated, .answered, .expired, .cancelled, run.completed, run.failed) go to which channel, by kind, tool, priority and audience; written with the event, in its transaction',
  }),
  RUNNER_NOTIFY_MAX_ATTEMPTS: variable({
    name: 'RUNNER_NOTIFY_MAX_ATTEMPTS',
    kind: wholeNumber(1),
    default: 8,
    description:
      'attempts to deliver a notification before it is failed (dead-lettered; runner notifications retry sends it again)',
  }),
  RUNNER_NOTIFY_BACKOFF_MS: variable({
    name: 'RUNNER_NOTIFY_BACKOFF_MS',
    kind: wholeNumber(1),
    default: 1_000,
    description:
      'the first wait before a notification is sent again, in ms; doubling, with jitter, at most an hour',
  }),
  RUNNER_NOTIFY_LEASE_MS: variable({
    name: 'RUNNER_NOTIFY_LEASE_MS',
    kind: wholeNumber(1),
    default: 60_000,
    description:
      'how long a notification claimed for delivery stays away from other deliverers, in ms: a deliverer killed mid-send leaves it due again after this',
  }),
  RUNNER_AUDIT_KEY_FILE: variable({
    name: 'RUNNER_AUDIT_KEY_FILE',
    kind: text('a file path'),
    default: undefined,
    defaultText:
      "the data folder's audit.key (made on first use) on the embedded default; none on PostgreSQL: no audit log",
    description:
      "a file holding the audit log's signing key (at least 16 bytes), kept outside the database",
  }),
  RUNNER_AUDIT_KEY: variable({
    name: 'RUNNER_AUDIT_KEY',
    kind: auditKey,
    default: undefined,
    defaultText: 'none',
    description: "the audit log's signing key itself, instead of RUNNER_AUDIT_KEY_FILE",
  }),
  RUNNER_WAKE_POLL_MS: variable({
    name: 'RUNNER_WAKE_POLL_MS',
    kind: wholeNumber(1),
    default: undefined,
    defaultText: '5000 with LISTEN, 1000 without',
    description: 'how often wake looks for answers no notification announced, in ms',
  }),
  RUNNER_LEASE_MS: variable({
    name: 'RUNNER_LEASE_MS',
    kind: wholeNumber(1),
    default: 60_000,
    description: 'how long a worker holds a run unless it renews, in ms',
  }),
  RUNNER_MAX_ATTEMPTS: variable({
    name: 'RUNNER_MAX_ATTEMPTS',
    kind: wholeNumber(1),
    default: 5,
    description: 'attempts of a resume before the run fails',
  }),
  RUNNER_RETRY_BACKOFF_MS: variable({
    name: 'RUNNER_RETRY_BACKOFF_MS',
    kind: wholeNumber(1),
    default: 1_000,
    description: 'the first wait before a retry of a resume, in ms; doubling, with jitter',
  }),
  RUNNER_WORKER_CONCURRENCY: variable({
    name: 'RUNNER_WORKER_CONCURRENCY',
    kind: wholeNumber(1),
    default: 2,
    description: 'workers of one delegate call that run at once',
  }),
  RUNNER_DB_POOL: variable({
    name: 'RUNNER_DB_POOL',
    kind: wholeNumber(1, 1000),
    default: 10,
    description: 'connections in the pool to PostgreSQL',
  }),
  RUNNER_LISTEN_URL: variable({
    name: 'RUNNER_LISTEN_URL',
    kind: postgresUrl,
    default: undefined,
    defaultText: 'none: no LISTEN behind a pooler',
    description:
      'a direct connection for LISTEN/NOTIFY when DATABASE_URL goes through a pooler, as ?pgbouncer=true says',
  }),
  PGCONNECT_TIMEOUT: variable({
    name: 'PGCONNECT_TIMEOUT',
    kind: seconds,
    default: 10,
    description:
      "how long a command waits to reach PostgreSQL, when DATABASE_URL's ?connect_timeout=SECONDS does not say",
  }),
  ANTHROPIC_API_KEY: variable({
    name: 'ANTHROPIC_API_KEY',
    kind: text('a key'),
    default: undefined,
    defaultText: 'none',
    description: 'needed by anthropic:MODEL',
  }),
  ANTHROPIC_BASE_URL: variable({
    name: 'ANTHROPIC_BASE_URL',
    kind: httpUrl,
    default: undefined,
    defaultText: "Anthropic's API",
    description: 'another endpoint for anthropic:MODEL',
  }),
  OPENAI_API_KEY: variable({
    name: 'OPENAI_API_KEY',
    kind: text('a key'),
    default: undefined,
    defaultText: 'none',
    description: 'needed by openai:MODEL, unless OPENAI_BASE_URL is set',
  }),
  OPENAI_BASE_URL: variable({
    name: 'OPENAI_BASE_URL',
    kind: httpUrl,
    default: undefined,
    defaultText: "OpenAI's API",
    description:
      'a local OpenAI-compatible server for openai:MODEL (Ollama, vLLM, llama.cpp), which takes no key',
  }),
  RUNNER_MAX_TOKENS: variable({
    name: 'RUNNER_MAX_TOKENS',
    kind: wholeNumber(1),
    default: 8192,
    description: "the most tokens an Anthropic model's answer may take",
  }),
  RUNNER_THINKING: variable({
    name: 'RUNNER_THINKING',
    kind: either(oneOf('adaptive', 'off'), wholeNumber(1024)),
    default: 'off',
    description:
      "an Anthropic model's extended thinking: adaptive, or a token budget below RUNNER_MAX_TOKENS",
  }),
  RUNNER_MODEL_RETRIES: variable({
    name: 'RUNNER_MODEL_RETRIES',
    kind: wholeNumber(0),
    default: 3,
    description:
      'retries of a model call after a 429, a 5xx or a dropped connection, with backoff and jitter, honouring retry-after',
  }),
  RUNNER_MODEL_BACKOFF_MS: variable({
    name: 'RUNNER_MODEL_BACKOFF_MS',
    kind: wholeNumber(0),
    default: 500,
    description: 'the first wait before a model call is retried, in ms; doubling',
  }),
  RUNNER_SCRIPTED_DELAY_MS: variable({
    name: 'RUNNER_SCRIPTED_DELAY_MS',
    kind: wholeNumber(0),
    default: 0,
    description: "the scripted model's simulated latency, in ms",
  }),
  RUNNER_DEMO_TOOL_DELAY_MS: variable({
    name: 'RUNNER_DEMO_TOOL_DELAY_MS',
    kind: wholeNumber(0),
    default: 0,
    description:
      "the demo's gated tools' simulated latency after their effect landed (a slow remote API), in ms",
  }),
  RUNNER_SCRIPTED_FAIL: variable({
    name: 'RUNNER_SCRIPTED_FAIL',
    kind: wholeNumber(0),
    default: 0,
    description: "how many of the scripted model's first calls in a process fail as a 503 would",
  }),
  NO_COLOR: variable({
    name: 'NO_COLOR',
    kind: flag,
    default: false,
    defaultText: 'unset: colour on a terminal',
    description: 'set: no colour',
  }),
  RUNNER_LOG_FORMAT: variable({
    name: 'RUNNER_LOG_FORMAT',
    kind: oneOf('text', 'json'),
    default: 'text',
    description:
      'as --log-format: json prints every line as one pino JSON object (level, time, msg, the run, conversation and token it is about)',
  }),
  RUNNER_DEBUG: variable({
    name: 'RUNNER_DEBUG',
    kind: flag,
    default: false,
    defaultText: 'unset',
    description: 'set: an unexpected failure (exit 1) also prints its stack',
  }),
  // The system's and the package managers': read, never documented as settings.
  USER: variable({ name: 'USER', kind: text('a user name'), default: undefined }),
  PGAPPNAME: variable({ name: 'PGAPPNAME', kind: text('a name'), default: undefined }),
  USERNAME: variable({ name: 'USERNAME', kind: text('a user name'), default: undefined }),
  npm_config_user_agent: variable({
    name: 'npm_config_user_agent',
    kind: text('a user agent'),
    default: undefined,
  }),
  npm_lifecycle_event: variable({
    name: 'npm_lifecycle_event',
    kind: text('a script name'),
    default: undefined,
  }),
  npm_command: variable({ name: 'npm_command', kind: text('a command'), default: undefined }),
  PNPM_PACKAGE_NAME: variable({
    name: 'PNPM_PACKAGE_NAME',
    kind: text('a package name'),
    default: undefined,
  }),
} as const;

/** The error for a value `variable` does not accept, naming it and what it accepts. */
export function invalidSetting(
  variable: Pick<Variable<unknown>, 'name' | 'kind'>,
  given: string,
  accepts: string = variable.kind.accepts,
) {
  const shown = variable.kind.echo === false ? '' : `, not "${given}"`;
  return usageError(`${variable.name} must be ${accepts}${shown}`);
}

/**
 * The value of `variable` in `env`: its default when unset or empty, else the value of its
 * text; a text its kind does not accept is a usage error (exit 2) naming the variable and
 * what it accepts.
 *
 * @example
 * const leaseMs = setting(VARIABLES.RUNNER_LEASE_MS); // 60000, or RUNNER_LEASE_MS
 */
export function setting<T, D extends T | undefined>(
  variable: Variable<T, D>,
  env: Env = process.env,
): T | D {
  const given = env[variable.name];
  if (given === undefined || given === '') return variable.default;
  const value = variable.kind.parse(given, variable.name);
  if (value === undefined) throw invalidSetting(variable, given);
  return value;
}

/** The variables a question is asked under (who answers it, by when, how many): read where it is asked. */
const QUESTION_POLICY = [
  VARIABLES.RUNNER_AUDIENCE,
  VARIABLES.RUNNER_REQUESTER_MAY_NOT_APPROVE,
  VARIABLES.RUNNER_DEADLINE,
  VARIABLES.RUNNER_REMIND,
  VARIABLES.RUNNER_ESCALATE,
  VARIABLES.RUNNER_QUORUM,
  VARIABLES.RUNNER_POLICY,
  VARIABLES.RUNNER_POLICY_SHADOW,
  VARIABLES.RUNNER_DENIAL_WINDOW_MS,
  VARIABLES.RUNNER_MAX_QUESTIONS,
] as const;

/** The {@link QUESTION_POLICY} variables set in `env`, as given. */
export function questionPolicyOf(env: Env = process.env): Record<string, string> {
  return Object.fromEntries(
    QUESTION_POLICY.flatMap((v) => (env[v.name] ? [[v.name, env[v.name] as string]] : [])),
  );
}

/** The names of the {@link QUESTION_POLICY} variables whose values mean different things in `given` and `env`. */
export function questionPolicyDiffering(given: Env, env: Env = process.env): string[] {
  const meaning = (variable: Variable<unknown>, from: Env) => {
    try {
      return JSON.stringify(setting(variable, from), (_, value) =>
        value instanceof Set ? [...value].sort() : value,
      );
    } catch {
      return `not read: ${from[variable.name]}`;
    }
  };
  return QUESTION_POLICY.filter(
    (v) => meaning(v as Variable<unknown>, given) !== meaning(v as Variable<unknown>, env),
  ).map((v) => v.name);
}

/** Reads every variable once: a bad value anywhere is refused before a command starts. */
export function checkEnvironment(env: Env = process.env): void {
  for (const variable of Object.values(VARIABLES)) setting(variable as Variable<unknown>, env);
  // A rule naming a channel that is not configured would refuse the events it takes.
  notifyRules(env);
}
/**
 * The routing rules: RUNNER_NOTIFY, else every event to the webhook when RUNNER_WEBHOOK_URL
 * is set and new questions by email when RUNNER_SMTP_URL is.
 * @throws a usage error for a rule naming a channel that is not configured.
 */
export function notifyRules(env?: Env): readonly NotifyRule[] {
  const url = setting(VARIABLES.RUNNER_WEBHOOK_URL, env);
  const smtp = setting(VARIABLES.RUNNER_SMTP_URL, env);
  const slack =
    setting(VARIABLES.RUNNER_SLACK_TOKEN, env) && setting(VARIABLES.RUNNER_SLACK_CHANNEL, env);
  const defaults: NotifyRule[] = [
    ...(url ? [{ channel: 'webhook' as const, kind: '*' }] : []),
    ...(smtp ? [{ channel: 'email' as const, kind: 'question.created' }] : []),
    ...(slack ? [{ channel: 'slack' as const, kind: 'question.created' }] : []),
  ];
  const rules = setting(VARIABLES.RUNNER_NOTIFY, env) ?? defaults;
  if (!url && rules.some((rule) => rule.channel === 'webhook')) {
    throw usageError('RUNNER_NOTIFY sends events to the webhook: set RUNNER_WEBHOOK_URL too');
  }
  if (
    !(smtp && setting(VARIABLES.RUNNER_EMAIL_TO, env)) &&
    rules.some((r) => r.channel === 'email')
  ) {
    throw usageError('email notifications need RUNNER_SMTP_URL and RUNNER_EMAIL_TO');
  }
  if (!slack && rules.some((r) => r.channel === 'slack')) {
    throw usageError('Slack notifications need RUNNER_SLACK_TOKEN and RUNNER_SLACK_CHANNEL');
  }
  return rules;
}

/** Defaults of command-line options, for the commands and their help. */
export const OPTION_DEFAULTS = {
  /** `wake --concurrency`. */
  concurrency: 1,
  /** `serve --host`: this machine only. */
  host: '127.0.0.1',
  /** `serve --port`. */
  port: 4319,
} as const;

/**
 * Whether the standard OTEL_* variables ask for traces: an OTLP endpoint is set (or
 * OTEL_TRACES_EXPORTER=otlp), and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none.
 * Off by default: then nothing of OpenTelemetry's SDK is loaded.
 */
export function tracesWanted(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(
    env.OTEL_EXPORTER_OTLP_ENDPOINT ||
      env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
      exporter === 'otlp',
  );
}

/**
 * The headings `runner help environment` lists the variables under, in the table's order:
 * each heading's group runs from the variable it names to the next heading's.
 */
export const VARIABLE_GROUPS: ReadonlyArray<{
  readonly heading: string;
  readonly from: keyof typeof VARIABLES;
}> = [
  { heading: 'storage and the model', from: 'DATABASE_URL' },
  { heading: 'serve: the approval center', from: 'RUNNER_TOKEN' },
  { heading: 'serve: signing in through an OpenID Connect provider', from: 'RUNNER_OIDC_ISSUER' },
  { heading: 'questions: who answers, by when, how many', from: 'RUNNER_AUDIENCE' },
  { heading: 'notifications', from: 'RUNNER_WEBHOOK_URL' },
  { heading: 'the audit log', from: 'RUNNER_AUDIT_KEY_FILE' },
  { heading: 'wake: workers, leases and the database', from: 'RUNNER_WAKE_POLL_MS' },
  { heading: 'models', from: 'ANTHROPIC_API_KEY' },
  { heading: 'output', from: 'NO_COLOR' },
];

/**
 * The documented variables, one entry each under its group's heading, as
 * `runner help environment` lists them.
 */
export function describeVariables(width = 90): string {
  const headings = new Map<string, string>(VARIABLE_GROUPS.map((g) => [g.from, g.heading]));
  const lines: string[] = [];
  for (const v of Object.values(VARIABLES) as Variable<unknown>[]) {
    const heading = headings.get(v.name);
    if (heading !== undefined) lines.push(...(lines.length ? [''] : []), `${heading}:`);
    if (v.description === undefined) continue;
    const shown = v.defaultText ?? String(v.default);
    const entry = `${v.name}  ${v.description}; takes ${v.kind.accepts}, default ${shown}`;
    lines.push(...wrap(entry, width - 2).map((line) => `  ${line}`));
  }
  const system = (Object.values(VARIABLES) as Variable<unknown>[]).filter(
    (v) => v.description === undefined,
  );
  const also = `also read, as the system or a launcher sets them: ${system.map((v) => v.name).join(', ')}`;
  lines.push('', ...wrap(also, width).map((line) => line.trim()));
  return lines.join('\n');
}

// Continuation lines are indented, so that each variable starts a line of its own.
function wrap(entry: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of entry.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if (next.length > width && line !== '') {
      lines.push(line);
      line = `      ${word}`;
    } else line = next;
  }
  lines.push(line);
  return lines;
}

import { describe, expect, it } from 'vitest';
import { HELP, HELP_TOPICS } from '../src/commands/help.js';
import { parseGrace } from '../src/commands/wake.js';
import { leasePolicyFromEnv } from '../src/config/executive-policy.js';
import {
  checkEnvironment,
  describeVariables,
  type Env,
  OPTION_DEFAULTS,
  setting,
  VARIABLE_GROUPS,
  VARIABLES,
  type Variable,
} from '../src/config/index.js';
import { workerConcurrency } from '../src/demo/tools.js';
import { RunnerError } from '../src/errors.js';
import { classifyFailure } from '../src/failure.js';
import { modelFromId } from '../src/model/index.js';
import { oidcSettings } from '../src/serve/index.js';

// Every variable is read through its declaration: unset or empty is the default, a text
// the kind takes is its value, anything else a usage error naming the variable and what it
// takes.

/** The error `setting` throws for `variable` set to `given`. */
function refusal(variable: Variable<unknown>, given: string): RunnerError {
  try {
    setting(variable, { [variable.name]: given });
  } catch (error) {
    if (RunnerError.is(error)) return error;
    throw error;
  }
  throw new Error(`${variable.name}="${given}" was accepted`);
}

const read = (variable: Variable<unknown>, given: string | undefined) =>
  setting(variable, { [variable.name]: given });

describe('RUNNER_DEADLINE', () => {
  it('takes TOOL=DURATION:DEFAULT pairs, the default decline, cancel or accept:TEXT', () => {
    expect(
      read(VARIABLES.RUNNER_DEADLINE, 'approve=24h:decline,ask_user=90s:accept:surprise me'),
    ).toEqual({
      approve: { ms: 86_400_000, answer: { action: 'decline', content: '' } },
      ask_user: { ms: 90_000, answer: { action: 'accept', content: 'surprise me' } },
    });
    expect(read(VARIABLES.RUNNER_DEADLINE, 'approve=2w:cancel')).toEqual({
      approve: { ms: 1_209_600_000, answer: { action: 'cancel', content: '' } },
    });
    expect(read(VARIABLES.RUNNER_DEADLINE, '')).toBeUndefined();
  });

  it('refuses a pair it cannot read, naming what it takes', () => {
    for (const bad of [
      'approve=24h',
      'approve=soon:decline',
      'approve=0s:decline',
      'approve=1h:maybe',
      'ask_user=1h:accept:a, b',
    ]) {
      expect(refusal(VARIABLES.RUNNER_DEADLINE, bad).message).toContain('TOOL=DURATION:DEFAULT');
    }
  });
});

describe('RUNNER_REMIND, RUNNER_ESCALATE and RUNNER_QUORUM', () => {
  it('take TOOL=DURATION, TOOL=DURATION:WHO and TOOL=M[:D] pairs', () => {
    expect(read(VARIABLES.RUNNER_REMIND, 'approve=4h,ask_user=30m')).toEqual({
      approve: 14_400_000,
      ask_user: 1_800_000,
    });
    expect(read(VARIABLES.RUNNER_ESCALATE, 'approve=8h:cfo+@ada+lead')).toEqual({
      approve: { ms: 28_800_000, names: ['ada'], roles: ['cfo', 'lead'] },
    });
    expect(read(VARIABLES.RUNNER_QUORUM, 'approve=3:2,ask_user=2')).toEqual({
      approve: { approvals: 3, declines: 2 },
      ask_user: { approvals: 2, declines: 1 },
    });
  });

  it('refuse a pair they cannot read, naming what they take', () => {
    for (const bad of ['approve', 'approve=0s', 'approve=soon']) {
      expect(refusal(VARIABLES.RUNNER_REMIND, bad).message).toContain('TOOL=DURATION');
    }
    for (const bad of ['approve=8h', 'approve=8h:', 'approve=8h:a b']) {
      expect(refusal(VARIABLES.RUNNER_ESCALATE, bad).message).toContain('TOOL=DURATION:WHO');
    }
    for (const bad of ['approve=0', 'approve=two', 'approve=2:0', 'approve=1000']) {
      expect(refusal(VARIABLES.RUNNER_QUORUM, bad).message).toContain('TOOL=M');
    }
  });
});

describe('setting', () => {
  it('unset or empty is the default, for every kind', () => {
    expect(setting(VARIABLES.RUNNER_LEASE_MS, {})).toBe(60_000);
    expect(read(VARIABLES.RUNNER_LEASE_MS, '')).toBe(60_000);
    expect(read(VARIABLES.RUNNER_DB_POOL, '')).toBe(10);
    expect(read(VARIABLES.RUNNER_MODEL_RETRIES, '')).toBe(3);
    expect(read(VARIABLES.PGCONNECT_TIMEOUT, '')).toBe(10);
    expect(read(VARIABLES.RUNNER_THINKING, '')).toBe('off');
    expect(read(VARIABLES.RUNNER_DATA, '')).toBe('.runner');
    expect(read(VARIABLES.RUNNER_MODEL, undefined)).toBe('scripted:trip');
    expect(read(VARIABLES.DATABASE_URL, '')).toBeUndefined();
    expect(read(VARIABLES.OPENAI_BASE_URL, '')).toBeUndefined();
    expect(read(VARIABLES.NO_COLOR, '')).toBe(false);
  });

  it('a whole number from its minimum: takes it and above, refuses below, fractions and words', () => {
    expect(read(VARIABLES.RUNNER_LEASE_MS, '1')).toBe(1);
    expect(read(VARIABLES.RUNNER_LEASE_MS, '1500')).toBe(1500);
    expect(read(VARIABLES.RUNNER_MODEL_RETRIES, '0')).toBe(0);
    expect(read(VARIABLES.RUNNER_SCRIPTED_DELAY_MS, '0')).toBe(0);
    expect(refusal(VARIABLES.RUNNER_LEASE_MS, '0').message).toBe(
      'RUNNER_LEASE_MS must be a whole number ≥ 1, not "0"',
    );
    expect(refusal(VARIABLES.RUNNER_MAX_ATTEMPTS, '2.5').message).toBe(
      'RUNNER_MAX_ATTEMPTS must be a whole number ≥ 1, not "2.5"',
    );
    expect(refusal(VARIABLES.RUNNER_WAKE_POLL_MS, 'soon').message).toBe(
      'RUNNER_WAKE_POLL_MS must be a whole number ≥ 1, not "soon"',
    );
    expect(refusal(VARIABLES.RUNNER_WORKER_CONCURRENCY, ' ').message).toBe(
      'RUNNER_WORKER_CONCURRENCY must be a whole number ≥ 1, not " "',
    );
    expect(refusal(VARIABLES.RUNNER_MODEL_RETRIES, '-1').message).toBe(
      'RUNNER_MODEL_RETRIES must be a whole number ≥ 0, not "-1"',
    );
    expect(refusal(VARIABLES.RUNNER_SCRIPTED_FAIL, 'x').message).toBe(
      'RUNNER_SCRIPTED_FAIL must be a whole number ≥ 0, not "x"',
    );
  });

  it('a whole number in a range: takes both ends, refuses outside them', () => {
    expect(read(VARIABLES.RUNNER_DB_POOL, '1')).toBe(1);
    expect(read(VARIABLES.RUNNER_DB_POOL, '1000')).toBe(1000);
    expect(refusal(VARIABLES.RUNNER_DB_POOL, '1001').message).toBe(
      'RUNNER_DB_POOL must be a whole number from 1 to 1000, not "1001"',
    );
    expect(refusal(VARIABLES.RUNNER_DB_POOL, '0').message).toContain('from 1 to 1000, not "0"');
  });

  it('seconds: above 0 and up to an hour, fractions too', () => {
    expect(read(VARIABLES.PGCONNECT_TIMEOUT, '0.5')).toBe(0.5);
    expect(read(VARIABLES.PGCONNECT_TIMEOUT, '3600')).toBe(3600);
    for (const given of ['0', '3601', 'soon', '-1']) {
      expect(refusal(VARIABLES.PGCONNECT_TIMEOUT, given).message).toBe(
        `PGCONNECT_TIMEOUT must be a number of seconds above 0 and up to 3600, not "${given}"`,
      );
    }
  });

  it('one of some words, or a number: takes each, refuses anything else', () => {
    expect(read(VARIABLES.RUNNER_THINKING, 'adaptive')).toBe('adaptive');
    expect(read(VARIABLES.RUNNER_THINKING, 'off')).toBe('off');
    expect(read(VARIABLES.RUNNER_THINKING, '4096')).toBe(4096);
    for (const given of ['on', 'Adaptive', '10']) {
      expect(refusal(VARIABLES.RUNNER_THINKING, given).message).toBe(
        `RUNNER_THINKING must be "adaptive", "off" or a whole number ≥ 1024, not "${given}"`,
      );
    }
  });

  it('an http(s) URL: takes both schemes, refuses others without repeating the value', () => {
    expect(read(VARIABLES.OPENAI_BASE_URL, 'http://localhost:11434/v1')).toBe(
      'http://localhost:11434/v1',
    );
    expect(read(VARIABLES.ANTHROPIC_BASE_URL, 'https://proxy.example/anthropic')).toBe(
      'https://proxy.example/anthropic',
    );
    for (const given of ['localhost:11434', 'ftp://me:secret@files.example', 'not a url']) {
      const { message } = refusal(VARIABLES.OPENAI_BASE_URL, given);
      expect(message).toBe('OPENAI_BASE_URL must be an http:// or https:// URL');
    }
  });

  it('a PostgreSQL URL: refused naming the variable and what is wrong, never the password', () => {
    const url = 'postgres://ada:pw@127.0.0.1:5432/runner?pgbouncer=true';
    expect(read(VARIABLES.DATABASE_URL, url)).toBe(url);
    const scheme = refusal(VARIABLES.DATABASE_URL, 'mysql://me:secret-pw@db.example/x');
    expect(scheme.message).toBe(
      'DATABASE_URL mysql://db.example/x is not a postgres URL: give postgres://USER@HOST:PORT/DATABASE',
    );
    expect(refusal(VARIABLES.RUNNER_LISTEN_URL, 'postgres://ada@127.0.0.1:70000/r').message).toBe(
      'RUNNER_LISTEN_URL has port 70000, out of range: a port is a number from 1 to 65535',
    );
    expect(refusal(VARIABLES.DATABASE_URL, 'not-a-url').message).toBe(
      'DATABASE_URL is not a URL: give postgres://USER@HOST:PORT/DATABASE',
    );
  });

  it('text and flags: any value is taken; a flag set to anything is on', () => {
    expect(read(VARIABLES.RUNNER_DATA, 'some/folder')).toBe('some/folder');
    expect(read(VARIABLES.RUNNER_TOKEN, 's3cret')).toBe('s3cret');
    expect(read(VARIABLES.NO_COLOR, '1')).toBe(true);
    expect(read(VARIABLES.RUNNER_DEBUG, '0')).toBe(true);
  });

  it('a claim path and a role map: dotted names, VALUE=ROLE pairs; others refused', () => {
    expect(read(VARIABLES.RUNNER_OIDC_ROLES_CLAIM, '')).toBe('groups');
    expect(read(VARIABLES.RUNNER_OIDC_ROLES_CLAIM, 'realm_access.roles')).toBe(
      'realm_access.roles',
    );
    for (const given of ['realm_access.', '.roles', 'a b']) {
      expect(refusal(VARIABLES.RUNNER_OIDC_ROLES_CLAIM, given).message).toContain(
        'RUNNER_OIDC_ROLES_CLAIM must be a claim name, or a dotted path',
      );
    }
    expect(
      read(VARIABLES.RUNNER_OIDC_ROLE_MAP, 'ops admins=admin, ops admins=finance,readers=viewer'),
    ).toEqual({
      'ops admins': ['admin', 'finance'],
      readers: ['viewer'],
    });
    for (const given of ['admins', 'ops=Admin', '=admin', 'ops=admin,', 'cn=x=viewer']) {
      expect(refusal(VARIABLES.RUNNER_OIDC_ROLE_MAP, given).message).toContain(
        'RUNNER_OIDC_ROLE_MAP must be VALUE=ROLE pairs',
      );
    }
  });

  it('the OpenID settings: none without an issuer, the audience defaults to the client, orphans refused', () => {
    expect(oidcSettings({})).toBeUndefined();
    const issuer = 'https://id.example/realms/team';
    expect(oidcSettings({ RUNNER_OIDC_ISSUER: issuer, RUNNER_OIDC_CLIENT_ID: 'runner' })).toEqual({
      issuer,
      audience: 'runner',
      clientId: 'runner',
      clientSecret: undefined,
      redirectUri: undefined,
      rolesClaim: 'groups',
      roleMap: undefined,
      nameClaim: 'preferred_username',
      settingNames: {
        issuer: 'RUNNER_OIDC_ISSUER',
        clientId: 'RUNNER_OIDC_CLIENT_ID',
        roleMap: 'RUNNER_OIDC_ROLE_MAP',
      },
    });
    expect(
      oidcSettings({ RUNNER_OIDC_ISSUER: issuer, RUNNER_OIDC_AUDIENCE: 'api' })?.audience,
    ).toBe('api');
    // The callback defaults from the public URL (its path kept); RUNNER_OIDC_REDIRECT_URI wins.
    const page = { RUNNER_OIDC_ISSUER: issuer, RUNNER_OIDC_CLIENT_ID: 'runner' };
    const behind = { ...page, RUNNER_PUBLIC_URL: 'https://approvals.example.com/team/' };
    expect(oidcSettings(behind)?.redirectUri).toBe(
      'https://approvals.example.com/team/auth/oidc/callback',
    );
    expect(oidcSettings(page, 'https://approvals.example.com')?.redirectUri).toBe(
      'https://approvals.example.com/auth/oidc/callback',
    );
    const named = { ...behind, RUNNER_OIDC_REDIRECT_URI: 'https://id-cb.example.com/cb' };
    expect(oidcSettings(named)?.redirectUri).toBe('https://id-cb.example.com/cb');
    expect(() => oidcSettings({ RUNNER_OIDC_ISSUER: issuer })).toThrow(
      'RUNNER_OIDC_ISSUER needs RUNNER_OIDC_CLIENT_ID (the page signs in) or RUNNER_OIDC_AUDIENCE',
    );
    expect(() => oidcSettings({ RUNNER_OIDC_AUDIENCE: 'api' })).toThrow(
      'RUNNER_OIDC_AUDIENCE needs RUNNER_OIDC_ISSUER',
    );
  });

  it('a refusal is a usage error: exit 2, as any bad input', () => {
    const error = refusal(VARIABLES.RUNNER_LEASE_MS, '-5');
    expect(error.code).toBe('usage');
    expect(classifyFailure(error).exitCode).toBe(2);
  });
});

describe('the declarations', () => {
  it('each is filed under its own name, and its default is a value its kind takes', () => {
    for (const [key, variable] of Object.entries(VARIABLES) as [string, Variable<unknown>][]) {
      expect(variable.name).toBe(key);
      const value = variable.default;
      if (value === undefined || typeof value === 'boolean') continue;
      expect(read(variable, String(value)), key).toBe(value);
    }
  });

  it('checkEnvironment passes an environment of defaults and names the one bad value', () => {
    expect(() => checkEnvironment({})).not.toThrow();
    const env: Env = { RUNNER_LEASE_MS: '1000', RUNNER_DB_POOL: '4', RUNNER_MAX_TOKENS: 'lots' };
    expect(() => checkEnvironment(env)).toThrow(
      'RUNNER_MAX_TOKENS must be a whole number ≥ 1, not "lots"',
    );
  });

  it('`runner help environment` lists every documented variable under a heading, with what it takes and its default', () => {
    const listed = describeVariables();
    expect(HELP_TOPICS.environment).toContain(listed);
    // Each group's heading is the line before its first variable, in the table's order.
    for (const group of VARIABLE_GROUPS) {
      expect(listed, group.heading).toMatch(
        new RegExp(`^${group.heading}:\n {2}${group.from} {2}`, 'm'),
      );
    }
    for (const variable of Object.values(VARIABLES) as Variable<unknown>[]) {
      // Each entry starts a line of its own (a heading too); its continuation lines are indented further.
      const entries = listed.split(/\n(?=\S| {2}\S)/).map((e) => e.trim());
      const entry = entries.find((e) => e.startsWith(`${variable.name}  `));
      if (variable.description === undefined) {
        expect(entry, variable.name).toBeUndefined();
        continue;
      }
      const flat = entry?.replace(/\s+/g, ' ');
      expect(flat, variable.name).toContain(`takes ${variable.kind.accepts}`);
      expect(flat, variable.name).toContain(
        `default ${variable.defaultText ?? String(variable.default)}`,
      );
    }
    expect(listed).toContain('RUNNER_LEASE_MS  how long a worker holds a run');
    expect(listed).toMatch(/^also read, as the system or a launcher sets them: USER, /m);
  });

  it('option defaults are the ones the help states', () => {
    expect(OPTION_DEFAULTS).toEqual({
      concurrency: 1,
      host: '127.0.0.1',
      port: 4319,
    });
    expect(HELP.serve).toContain('--port N        default 4319');
    expect(HELP.serve).toContain('--host ADDR     default 127.0.0.1');
    expect(HELP.wake).toContain('(default 30s;');
    expect(parseGrace(undefined)).toBe(30_000);
  });
});

describe('the readers of settings', () => {
  it('values they once replaced by their default in silence are refused now', () => {
    expect(() => leasePolicyFromEnv({ RUNNER_LEASE_MS: '0' })).toThrow(
      'RUNNER_LEASE_MS must be a whole number ≥ 1, not "0"',
    );
    expect(() => leasePolicyFromEnv({ RUNNER_RETRY_BACKOFF_MS: 'fast' })).toThrow(
      'RUNNER_RETRY_BACKOFF_MS must be a whole number ≥ 1, not "fast"',
    );
    expect(() => workerConcurrency({ RUNNER_WORKER_CONCURRENCY: 'two' })).toThrow(
      'RUNNER_WORKER_CONCURRENCY must be a whole number ≥ 1, not "two"',
    );
    expect(leasePolicyFromEnv({ RUNNER_LEASE_MS: '1500', RUNNER_MAX_ATTEMPTS: '2' })).toMatchObject(
      { leaseMs: 1500, retry: { maxAttempts: 2 } },
    );
    expect(workerConcurrency({})).toBe(2);
  });

  it('a thinking budget must stay below RUNNER_MAX_TOKENS, which the message names', () => {
    const env = { ANTHROPIC_API_KEY: 'k', RUNNER_MAX_TOKENS: '4096', RUNNER_THINKING: '4096' };
    expect(() => modelFromId('anthropic:c', env)).toThrow(
      'RUNNER_THINKING must be "adaptive", "off" or a token budget from 1024 to below RUNNER_MAX_TOKENS (4096), not "4096"',
    );
    expect(modelFromId('anthropic:c', { ...env, RUNNER_THINKING: '2048' }).id).toBe('anthropic:c');
  });
});

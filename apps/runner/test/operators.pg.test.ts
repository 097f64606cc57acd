import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dataDirs, json, run, type Served, serve } from './serve-harness.js';
import { storageTargets, type Where } from './storage-targets.js';

// Operators who sign in to serve with API keys, and who may answer which question: through
// the CLI and the HTTP API, on the embedded default and on a PostgreSQL server.

const newDataDir = dataDirs();
const targets = await storageTargets();

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

for (const target of targets) {
  describe.skipIf(target.skip)(`operators (${target.name})`, { timeout: 300_000 }, () => {
    let where: Where;
    let served: Served | undefined;
    // The first question of the trip is an ask_user: only finance may answer it.
    const policy = { RUNNER_AUDIENCE: 'ask_user=finance' };
    const cli = (args: string[]) =>
      run([...args, '--json', ...where.args], { ...where.env, ...policy });
    const keys: Record<string, string> = {};
    const tokens: Record<string, string> = {};

    beforeAll(async () => {
      where = await target.setUp();
    });
    afterAll(async () => {
      await served?.stop();
      await where?.drop();
    });

    const add = async (name: string, roles: string[]) => {
      const added = await cli(['operators', 'add', name, ...roles.flatMap((r) => ['--role', r])]);
      expect(added.code, added.stderr).toBe(0);
      const event = added.events.find((e) => e.type === 'operator-added');
      expect(event).toMatchObject({ name, key: expect.stringMatching(/^runner_[0-9a-f]{16}_/) });
      keys[name] = event?.key as string;
    };
    const exec = async (conversation: string) => {
      const started = await cli(['exec', 'Plan a trip', '--conversation', conversation]);
      expect(started.code, started.stderr).toBe(0);
      tokens[conversation] = started.events.find((e) => e.type === 'run-waiting')?.token as string;
    };

    it('add, list, revoke and rotate; keys are printed once and refused for bad roles and reused names', async () => {
      await add('ada', ['admin']);
      await add('bob', ['finance']);
      await add('cy', []);
      await add('vic', ['viewer', 'finance']);
      await add('dan', []);
      await add('eve', ['operator', 'finance']);
      const reused = await cli(['operators', 'add', 'bob']);
      expect(reused.code).toBe(5);
      const twoAccess = await cli([
        'operators',
        'add',
        'zed',
        '--role',
        'admin',
        '--role',
        'viewer',
      ]);
      expect(twoAccess.code).toBe(2);
      expect(twoAccess.stderr).toContain('give one of --role admin, operator or viewer');

      const revoked = await cli(['operators', 'revoke', 'dan']);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect((await cli(['operators', 'revoke', 'dan'])).code).toBe(3);
      const rotated = await cli(['operators', 'rotate', 'eve']);
      expect(rotated.code, rotated.stderr).toBe(0);
      keys.eveOld = keys.eve as string;
      keys.eve = rotated.events.find((e) => e.type === 'operator-rotated')?.key as string;
      expect(keys.eve).not.toBe(keys.eveOld);
      expect((await cli(['operators', 'rotate', 'dan'])).code).toBe(3);
      expect((await cli(['operators', 'rotate', 'nobody'])).code).toBe(3);

      const listed = await cli(['operators', 'list']);
      expect(listed.code, listed.stderr).toBe(0);
      const operators = listed.events.filter((e) => e.type === 'operator');
      expect(operators.map((o) => [o.name, o.roles, o.revokedAt === null])).toEqual([
        ['ada', ['admin'], true],
        ['bob', ['operator', 'finance'], true],
        ['cy', ['operator'], true],
        ['dan', ['operator'], false],
        ['eve', ['operator', 'finance'], true],
        ['vic', ['viewer', 'finance'], true],
      ]);
      // Only hashes are kept: no key is ever listed.
      for (const key of Object.values(keys)) expect(listed.stdout).not.toContain(key);
    });

    it('the CLI answers as the OS user, with no audience check', async () => {
      await exec('ops-cli');
      const answered = await cli(['answer', tokens['ops-cli'] as string, '--option', '1']);
      expect(answered.code, answered.stderr).toBe(0);
    });

    it('serve asks every request for a live key: wrong, revoked and rotated keys are 401', async () => {
      await exec('ops-pay');
      served = await serve(
        [...where.args, '--token', 'shared-admin-token', '--operator', 'ops-lead'],
        {
          ...where.env,
          ...policy,
        },
      );
      const api = (path: string) => new URL(path, served?.url).toString();
      expect(served.stdout()).toContain('"signIn":"key"');
      expect((await call(api('/api/pauses'))).status).toBe(401);
      for (const key of ['runner_0000000000000000_wrong', 'wrong', keys.dan, keys.eveOld]) {
        const refused = await call(api('/api/pauses'), { headers: bearer(key as string) });
        expect(refused.status, key).toBe(401);
        expect(refused.body.error.code).toBe('unauthorized');
      }
      for (const key of [keys.eve, keys.ada, 'shared-admin-token']) {
        expect((await call(api('/api/pauses'), { headers: bearer(key as string) })).status).toBe(
          200,
        );
      }
    });

    it('the audience: refused (403, nothing changed) outside it and for a viewer, accepted inside', async () => {
      const api = (path: string) => new URL(path, served?.url).toString();
      const token = tokens['ops-pay'] as string;
      const canAnswer = async (key: string) =>
        (await call(api('/api/pauses'), { headers: bearer(key) })).body.pauses.find(
          (p: { token: string }) => p.token === token,
        )?.canAnswer;
      // Everyone signed in sees the question; only its audience may answer it.
      expect(await canAnswer(keys.cy as string)).toBe(false);
      expect(await canAnswer(keys.bob as string)).toBe(true);
      expect(await canAnswer(keys.vic as string)).toBe(false);

      const accept = json({ action: 'accept', content: 'Lisbon' });
      for (const who of ['cy', 'vic']) {
        const refused = await call(api(`/api/pauses/${token}/answer`), {
          ...accept,
          headers: { ...accept.headers, ...bearer(keys[who] as string) },
        });
        expect(refused.status, who).toBe(403);
        expect(refused.body.error.code, who).toBe('forbidden');
        const batch = json({ answers: [{ token, action: 'accept', content: 'Lisbon' }] });
        const batchRefused = await call(api('/api/pauses/answer-batch'), {
          ...batch,
          headers: { ...batch.headers, ...bearer(keys[who] as string) },
        });
        expect(batchRefused.status, who).toBe(403);
      }
      // Nothing changed: the question is still pending.
      expect(await canAnswer(keys.ada as string)).toBe(true);
      const stop = json({});
      const stopRefused = await call(api('/api/conversations/ops-pay/stop'), {
        ...stop,
        headers: { ...stop.headers, ...bearer(keys.bob as string) },
      });
      expect(stopRefused.status).toBe(403);
      // The audit log is an admin's to read.
      for (const who of ['bob', 'vic']) {
        const auditRefused = await call(api('/api/audit'), {
          headers: bearer(keys[who] as string),
        });
        expect(auditRefused.status, who).toBe(403);
      }
      expect((await call(api('/api/audit'), { headers: bearer(keys.ada as string) })).status).toBe(
        200,
      );

      const accepted = await call(api(`/api/pauses/${token}/answer`), {
        ...accept,
        headers: { ...accept.headers, ...bearer(keys.bob as string) },
      });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      const recent = await call(api('/api/recent'), { headers: bearer(keys.ada as string) });
      expect(recent.body.recent.find((r: { token: string }) => r.token === token)).toMatchObject({
        answeredBy: 'bob',
        answer: { action: 'accept', content: 'Lisbon' },
      });
      const cliAnswered = recent.body.recent.find(
        (r: { token: string }) => r.token === tokens['ops-cli'],
      );
      expect(cliAnswered?.answeredBy).toBeTruthy();
      await served?.stop();
      served = undefined;
    });

    it('a non-loopback bind without operators and without --token refuses to start', async () => {
      const fresh = target.name === 'embedded' ? ['--data', newDataDir()] : where.args;
      const env = target.name === 'embedded' ? {} : where.env;
      if (target.name === 'postgres') {
        // Every operator revoked: none is live.
        for (const name of ['ada', 'bob', 'cy', 'eve', 'vic']) {
          expect((await cli(['operators', 'revoke', name])).code).toBe(0);
        }
      }
      const refused = await run(['serve', '--host', '0.0.0.0', '--port', '0', ...fresh], env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('runner operators add NAME --role admin');
      // On this machine, the zero-set-up default stays: one local operator, no key.
      const local = await serve(fresh, env);
      try {
        expect(local.stdout()).toContain('"signIn":"none"');
        expect((await call(new URL('/api/pauses', local.url).toString())).status).toBe(200);
      } finally {
        await local.stop();
      }
    });
  });
}

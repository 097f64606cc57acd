import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, json, run, type Served, serve } from './serve-harness.js';
import { storageTargets, type Where } from './storage-targets.js';

// Who may answer a question from the runner's policy: the audience the model names in its
// tool call (it narrows RUNNER_AUDIENCE, never widens it), and separation of duties
// (RUNNER_REQUESTER_MAY_NOT_APPROVE with exec --requester), on the embedded default and on
// PostgreSQL, through the HTTP API with operators' keys and into the audit log.

const AUDIT_KEY = { RUNNER_AUDIT_KEY: 'the policy tests key, 16+ bytes' };
const targets = await storageTargets(AUDIT_KEY);

for (const target of targets) {
  describe.skipIf(target.skip)(`the question policy (${target.name})`, { timeout: 300_000 }, () => {
    let where: Where;
    let served: Served | undefined;
    const keys: Record<string, string> = {};
    const tokens: Record<string, string> = {};
    const cli = (args: string[], env: Record<string, string> = {}) =>
      run([...args, '--json', ...where.args], { ...where.env, ...env });

    // The embedded default's serve holds the data folder: every exec comes before it.
    beforeAll(async () => {
      where = await target.setUp();
      for (const [name, role] of [
        ['ada', 'admin'],
        ['bob', 'finance'],
        ['eve', 'finance'],
        ['tia', 'travel'],
        ['oz', 'ops'],
        ['vic', 'viewer'],
      ] as const) {
        const added = await cli(['operators', 'add', name, '--role', role]);
        expect(added.code, added.stderr).toBe(0);
        keys[name] = added.events.find((e) => e.type === 'operator-added')?.key as string;
      }
      const exec = async (
        conversation: string,
        env: Record<string, string>,
        more: string[] = [],
      ) => {
        const started = await cli(
          [
            'exec',
            'Pay invoice 42',
            '--model',
            'scripted:payment',
            '--conversation',
            conversation,
            ...more,
          ],
          env,
        );
        expect(started.code, started.stderr).toBe(0);
        tokens[conversation] = started.events.find((e) => e.type === 'run-waiting')
          ?.token as string;
      };
      // The model names finance and travel; no policy for approve.
      await exec('narrowed', {});
      // The policy admits finance and ops; the model's travel is not added, ops is dropped.
      await exec('within-policy', { RUNNER_AUDIENCE: 'approve=finance,approve=ops' });
      // Bob asked for the payment; the requester of an approval may not answer it.
      await exec('own-request', { RUNNER_REQUESTER_MAY_NOT_APPROVE: 'approve' }, [
        '--requester',
        'bob',
      ]);
      // The same, but the policy bars requesters of other tools only.
      await exec('other-tools', { RUNNER_REQUESTER_MAY_NOT_APPROVE: 'ask_user' }, [
        '--requester',
        'bob',
      ]);
      served = await serve(where.args, where.env);
    });
    afterAll(async () => {
      await served?.stop();
      await where?.drop();
    });

    const answerAs = (who: string, conversation: string) => {
      const body = json({ action: 'accept', content: 'approved' });
      return call(new URL(`/api/pauses/${tokens[conversation]}/answer`, served?.url).toString(), {
        ...body,
        headers: { ...body.headers, authorization: `Bearer ${keys[who]}` },
      });
    };
    const expectRefused = async (who: string, conversation: string) => {
      const refused = await answerAs(who, conversation);
      expect(refused.status, `${who} on ${conversation}`).toBe(403);
      expect(refused.body.error.code).toBe('forbidden');
      return refused;
    };

    it('the API tells each caller why a question is read-only for them, for the page to say', async () => {
      const asSeenBy = async (who: string, conversation: string) => {
        const url = new URL(`/api/pauses/${tokens[conversation]}`, served?.url).toString();
        const got = await call(url, { headers: { authorization: `Bearer ${keys[who]}` } });
        expect(got.status, JSON.stringify(got.body)).toBe(200);
        const { canAnswer, readOnly } = got.body.pause;
        return { canAnswer, readOnly };
      };
      expect(await asSeenBy('bob', 'own-request')).toEqual({
        canAnswer: false,
        readOnly: 'requester',
      });
      expect(await asSeenBy('eve', 'own-request')).toEqual({ canAnswer: true, readOnly: null });
      expect(await asSeenBy('oz', 'narrowed')).toEqual({ canAnswer: false, readOnly: 'audience' });
      expect(await asSeenBy('vic', 'narrowed')).toEqual({ canAnswer: false, readOnly: 'viewer' });
      expect(await asSeenBy('ada', 'own-request')).toEqual({ canAnswer: true, readOnly: null });
      // The list says the same as the question alone.
      const listed = await call(new URL('/api/pauses', served?.url).toString(), {
        headers: { authorization: `Bearer ${keys.bob}` },
      });
      const own = listed.body.pauses.find(
        (p: { token: string }) => p.token === tokens['own-request'],
      );
      expect(own).toMatchObject({ canAnswer: false, readOnly: 'requester' });
    });

    it('the model narrows an empty policy to the audience it names', async () => {
      await expectRefused('oz', 'narrowed');
      expect((await answerAs('tia', 'narrowed')).status).toBe(200);
    });

    it('the model narrows a policy, and never widens it', async () => {
      await expectRefused('tia', 'within-policy');
      await expectRefused('oz', 'within-policy');
      expect((await answerAs('bob', 'within-policy')).status).toBe(200);
    });

    it("the requester's own answer is refused, another operator's accepted, both in the audit log", async () => {
      const refused = await expectRefused('bob', 'own-request');
      expect(refused.body.error.message).toContain(
        'bob asked for it, and its requester may not answer it',
      );
      expect((await answerAs('eve', 'own-request')).status).toBe(200);
      // A policy for another tool leaves the requester free to answer.
      expect((await answerAs('bob', 'other-tools')).status).toBe(200);

      const audit = await call(
        new URL('/api/audit?conversation=own-request', served?.url).toString(),
        { headers: { authorization: `Bearer ${keys.ada}` } },
      );
      expect(audit.status, JSON.stringify(audit.body)).toBe(200);
      const entries = audit.body.entries as Array<{ kind: string; data: Record<string, unknown> }>;
      expect(entries[0]?.data).toMatchObject({
        requester: 'bob',
        requesterMayNotAnswer: true,
        audience: { names: [], roles: ['finance', 'travel'] },
      });
      expect(entries.map((e) => [e.kind, e.data.by ?? null, e.data.reason ?? null])).toEqual([
        ['question-created', null, null],
        ['answer-refused', 'bob', 'forbidden'],
        ['question-answered', 'eve', null],
      ]);
    });
  });
}

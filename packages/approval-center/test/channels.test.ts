import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import {
  answer,
  type ExecutiveStorage,
  migrate as migrateExecutive,
  sqlExecutiveStorage,
} from '@x/executive';
import { migrate as migrateNotify, shownDigest, signDecisionLink } from '@x/notify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalCenter, type ChannelOperator, createApprovalCenter } from '../src/index.js';

// The center's channels under /approvals, on each storage: a decision link's confirmation
// page and its one answer (consumed with it), and Slack's signed buttons, both answering as
// the host's operators through @x/executive's answer.

const KEY = 'k'.repeat(32);
const SLACK_SECRET = 'slack-signing-secret';
const operators: ChannelOperator[] = [
  { name: 'ada', roles: ['operator'] },
  { name: 'vic', roles: ['viewer'] },
  { name: 'old', roles: ['operator'], revokedAt: new Date() },
];

for (const spec of await sqlTargets()) {
  describe.skipIf(spec.skip)(`the center's channels on ${spec.kind}`, { timeout: 30_000 }, () => {
    let target: SqlTarget;
    let storage: ExecutiveStorage;
    let center: ApprovalCenter;
    let server: Server;
    let base: string;
    let answered = 0;

    /** A new pending question, with no run: an app's own. */
    const ask = async (token: string) => {
      await storage.pauses().insert({
        token,
        conversationId: `c-${token}`,
        kind: 'approve',
        question: `Send the ${token} report?`,
        toolCallId: `call-${token}`,
      });
      return storage.pauses().getByToken(token);
    };

    beforeAll(async () => {
      target = await spec.open();
      await migrateExecutive(target.db);
      await migrateNotify(target.db);
      storage = sqlExecutiveStorage(target.db, { queue: { synchronousClaim: true } });
      const flow = { storage, events: { wants: () => false, record: async () => {} } };
      center = createApprovalCenter({
        basePath: '/approvals',
        channels: {
          answers: {
            pending: (token) => storage.pauses().getByToken(token),
            operators: async () => operators,
            answer: (token, given, by, also) =>
              answer(flow, token, given, by, also ? { also } : {}),
            answered: () => answered++,
          },
          decisionKey: KEY,
          slack: { signingSecret: SLACK_SECRET, users: { U1: 'ada', U2: 'vic' } },
        },
      });
      server = createServer(center);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/approvals`;
    });
    afterAll(async () => {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
      await center?.close();
      await target?.close();
    });

    /** The link `to` gets to accept `pause`. */
    const linkFor = (pause: { token: string; question: string; options: unknown }, to: string) =>
      signDecisionLink(KEY, {
        token: pause.token,
        to,
        answer: { action: 'accept', content: '' },
        shown: shownDigest(pause),
        expiresAt: Date.now() + 60_000,
      });

    /** Opens `link` as a browser would, then confirms it from the page it shows. */
    const confirm = async (link: string, withCookie = true) => {
      const shown = await fetch(`${base}/decide?link=${link}`);
      const page = await shown.text();
      const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
      const cookie = shown.headers.get('set-cookie')?.split(';')[0] ?? '';
      return fetch(`${base}/decide`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(withCookie ? { cookie } : {}),
        },
        body: new URLSearchParams({ link, csrf }).toString(),
      });
    };

    it('shows what a decision link answers under the mount path, and answers only once confirmed', async () => {
      const pause = await ask('link-1');
      const link = linkFor(pause, 'ada');
      const shown = await fetch(`${base}/decide?link=${link}`);
      expect(shown.status).toBe(200);
      const page = await shown.text();
      expect(page).toContain('Send the link-1 report?');
      expect(page).toContain('<form method="post" action="/approvals/decide">');
      expect(shown.headers.get('set-cookie')).toMatch(
        /; Path=\/approvals\/decide; HttpOnly; SameSite=Strict/,
      );
      expect(await storage.pauses().getAnswer('link-1')).toBeUndefined();

      expect((await confirm(link, false)).status, 'no cookie').toBe(403);
      const before = answered;
      const confirmed = await confirm(link);
      expect(confirmed.status).toBe(200);
      expect(await confirmed.text()).toContain('accept by ada.');
      expect(answered).toBe(before + 1);
      const recorded = await storage.pauses().getAnswer('link-1');
      expect(recorded).toMatchObject({ answer: { action: 'accept' }, answeredBy: 'ada' });

      const again = await fetch(`${base}/decide?link=${link}`);
      expect(again.status).toBe(409);
      expect(await again.text()).toContain('this question was answered already, or waits no more');
    });

    it('refuses an altered link, a revoked recipient and a viewer, answering nothing', async () => {
      const pause = await ask('link-2');
      const link = linkFor(pause, 'ada');
      const tampered = `${link.slice(0, -2)}${link.endsWith('AA') ? 'BB' : 'AA'}`;
      expect((await fetch(`${base}/decide?link=${tampered}`)).status).toBe(403);
      const revoked = await confirm(linkFor(pause, 'old'));
      expect(revoked.status).toBe(403);
      expect(await revoked.text()).toContain('old is no longer an operator');
      const viewer = await confirm(linkFor(pause, 'vic'));
      expect(viewer.status).toBe(403);
      expect(await viewer.text()).toContain('vic is a viewer: viewers do not answer');
      expect(await storage.pauses().getAnswer('link-2')).toBeUndefined();
    });

    /** Posts Slack's interaction of `user` pressing a button, signed with `secret`. */
    const press = (user: string, button: object, secret = SLACK_SECRET) => {
      const payload = JSON.stringify({
        type: 'block_actions',
        user: { id: user },
        actions: [{ value: JSON.stringify(button) }],
      });
      const body = new URLSearchParams({ payload }).toString();
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
      return fetch(`${base}/slack/interactions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': timestamp,
          'x-slack-signature': signature,
        },
        body,
      });
    };

    it("answers a Slack button as the mapped operator, and refuses what Slack did not sign or a viewer's press", async () => {
      await ask('slack-1');
      const button = { token: 'slack-1', action: 'decline', content: 'not today' };
      expect((await press('U1', button, 'another secret')).status).toBe(401);
      const viewer = await press('U2', button);
      expect(viewer.status).toBe(403);
      expect(await viewer.json()).toEqual({
        response_type: 'ephemeral',
        text: 'vic is a viewer: viewers do not answer',
      });
      expect(await storage.pauses().getAnswer('slack-1')).toBeUndefined();

      const pressed = await press('U1', button);
      expect(pressed.status).toBe(200);
      expect(await pressed.json()).toEqual({
        answered: 'slack-1',
        text: 'decline "not today" by ada',
      });
      const recorded = await storage.pauses().getAnswer('slack-1');
      expect(recorded).toMatchObject({ answer: { action: 'decline', content: 'not today' } });
      expect((await press('U1', { nothing: true })).status).toBe(400);
    });
  });
}

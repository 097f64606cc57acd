import { AskUserStore, exportAudit, verifyAudit } from '@x/askuser';
import { expect, it } from 'vitest';
import { AuditSealer } from '../src/index.js';
import { describeOnEachStorage } from './support.js';

const key = 'k'.repeat(32);

await describeOnEachStorage('the audit sealer', (s) => {
  it('seals the changed chains on its interval until its signal aborts, and once more then', async () => {
    const store = new AskUserStore(s.target.db, { audit: { key } });
    const ask = (token: string, conversationId: string) =>
      store.insert({
        token,
        conversationId,
        kind: 'ask_user',
        question: `${token}?`,
        toolCallId: `call-${token}`,
      });
    await ask(`a-${s.target.kind}`, 'c1');
    const sealer = new AuditSealer({ db: s.target.db, key, everyMs: 50 });
    const stop = new AbortController();
    const loop = sealer.run(stop.signal);
    const sealed = async () => {
      const out = [];
      for await (const entry of exportAudit(s.target.db, { chain: 'global' })) out.push(entry);
      return out;
    };
    for (let i = 0; i < 100 && (await sealed()).length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await sealed()).map((e) => e.kind)).toEqual(['chains-sealed']);
    await ask(`b-${s.target.kind}`, 'c2');
    stop.abort();
    await loop;
    const entries = await sealed();
    expect(entries.length).toBeGreaterThanOrEqual(2);
    expect(entries.at(-1)?.data).toMatchObject({
      heads: expect.arrayContaining([expect.objectContaining({ chain: 'conversation:c2' })]),
    });
    expect((await verifyAudit(s.target.db, { key })).ok).toBe(true);
  });

  it('stops its loop on close(), sealing once more', async () => {
    const store = new AskUserStore(s.target.db, { audit: { key } });
    const sealer = new AuditSealer({ db: () => s.target.db, key: () => key, everyMs: 60_000 });
    const loop = sealer.run();
    await store.insert({
      token: `c-${s.target.kind}`,
      conversationId: 'c3',
      kind: 'ask_user',
      question: 'c?',
      toolCallId: 'call-c',
    });
    await sealer.close();
    await loop;
    const last = [];
    for await (const entry of exportAudit(s.target.db, { chain: 'global' })) last.push(entry);
    expect(last.at(-1)?.data).toMatchObject({
      heads: expect.arrayContaining([expect.objectContaining({ chain: 'conversation:c3' })]),
    });
  });

  it('does nothing without a key, and reports a failed seal to onError', async () => {
    const errors: unknown[] = [];
    await new AuditSealer({ db: s.target.db, key: undefined }).flush();
    const broken = new AuditSealer({
      db: s.target.db,
      key: 'short',
      onError: (e) => errors.push(e),
    });
    await broken.flush();
    expect(errors).toHaveLength(1);
  });
});

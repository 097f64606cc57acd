import { beforeAll, expect, it } from 'vitest';
import { describeOnEachStorage, pause } from '../test/support.js';
import { AskUserError, type AskUserStore } from './index.js';

await describeOnEachStorage('who answered (answeredBy)', (s) => {
  let store: AskUserStore;
  beforeAll(() => {
    ({ store } = s);
  });

  it('markResumed records who answered; every read of the resolved pause shows it', async () => {
    await store.insert(pause('by-1'));
    await store.markResumed(
      'by-1',
      { action: 'decline', content: 'too far' },
      { answeredBy: 'ada' },
    );
    expect((await store.getAnswer('by-1'))?.answeredBy).toBe('ada');
    expect((await store.listRecent()).map((r) => r.answeredBy)).toEqual(['ada']);
    expect((await store.listForConversation('conv-1'))[0]?.answeredBy).toBe('ada');
    expect((await store.listAnswered())[0]?.answeredBy).toBe('ada');
  });

  it('is null while pending, when not told, and for an auto-resolved pause', async () => {
    await store.insert(pause('by-pending'));
    await store.insert(pause('by-untold'));
    await store.insert(pause('by-stopped', { conversationId: 'conv-2' }));
    await store.markResumed('by-untold', { action: 'accept', content: 'yes' });
    await store.autoResolveForConversation('conv-2');
    const byToken = Object.fromEntries(
      (await store.listRecent()).map((r) => [r.token, r.answeredBy]),
    );
    expect(byToken).toEqual({ 'by-pending': null, 'by-untold': null, 'by-stopped': null });
  });

  it('markResumedBatch records one name for the whole batch', async () => {
    await store.insert(pause('by-a'));
    await store.insert(pause('by-b'));
    await store.markResumedBatch(
      [
        { token: 'by-a', answer: { action: 'accept', content: '1' } },
        { token: 'by-b', answer: { action: 'cancel', content: '' } },
      ],
      { answeredBy: 'grace' },
    );
    expect((await store.listAnswered()).map((a) => [a.token, a.answeredBy])).toEqual([
      ['by-a', 'grace'],
      ['by-b', 'grace'],
    ]);
  });

  it('refuses an empty or overlong name and changes nothing', async () => {
    await store.insert(pause('by-bad'));
    for (const answeredBy of ['', 'x'.repeat(201)]) {
      const error = await store
        .markResumed('by-bad', { action: 'accept', content: 'yes' }, { answeredBy })
        .catch((e: unknown) => e);
      expect(AskUserError.hasCode(error, 'invalid_argument')).toBe(true);
    }
    expect((await store.getByToken('by-bad')).token).toBe('by-bad');
  });
});

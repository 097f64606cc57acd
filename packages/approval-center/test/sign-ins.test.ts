import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  ApprovalCenterError,
  CSRF_HEADER,
  checkCsrf,
  memorySignInStore,
  type PageSignInIdentity,
  PageSignIns,
} from '../src/index.js';

// Page sign-ins over the in-memory store: the cookie, finding it again, CSRF, and what ends one.

/** A request carrying `headers`, and a response to read the Set-Cookie of. */
const request = (headers: Record<string, string> = {}) => {
  const req = new IncomingMessage(new Socket());
  req.headers = headers;
  return req;
};
const response = () => new ServerResponse(request());
const cookiesOf = (res: ServerResponse) => [res.getHeader('set-cookie') ?? []].flat().map(String);

const ada: PageSignInIdentity = {
  name: 'ada',
  access: 'admin',
  roles: ['admin'],
  signedInWith: 'oidc',
};

describe('PageSignIns', () => {
  it('sets an HttpOnly, SameSite=Strict cookie that finds the sign-in again', async () => {
    const signIns = new PageSignIns(memorySignInStore(), { ttlMs: 3_600_000, secure: false });
    const res = response();
    const opened = await signIns.open(res, ada);
    const [cookie = ''] = cookiesOf(res);
    expect(cookie).toMatch(
      /^approval_center_session=[\w-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=3600$/,
    );
    const id = cookie.split(';')[0]?.split('=')[1] ?? '';
    const req = request({ cookie: `other=1; approval_center_session=${id}` });
    expect(signIns.idOf(req)).toBe(id);
    expect(await signIns.byId(id)).toEqual(opened);
    // The id is never what the store keys it by.
    expect(opened.idHash).not.toBe(id);
  });

  it('names the cookie __Host- and marks it Secure behind TLS', async () => {
    const signIns = new PageSignIns(memorySignInStore(), {
      ttlMs: 60_000,
      secure: true,
      cookieName: 'runner_session',
    });
    const res = response();
    await signIns.open(res, ada);
    expect(cookiesOf(res)[0]).toMatch(/^__Host-runner_session=.*; Secure$/);
  });

  it('scopes the cookie to the folder of the center mounted under a path', async () => {
    const plain = new PageSignIns(memorySignInStore(), { ttlMs: 60_000, secure: false });
    const res = response();
    const opened = await plain.open(res, ada, '/approvals');
    const [cookie = ''] = cookiesOf(res);
    expect(cookie).toMatch(/^approval_center_session=[\w-]{43}; .*; Path=\/approvals\/; /);
    const id = cookie.split(';')[0]?.split('=')[1] ?? '';
    expect(plain.idOf(request({ cookie: `approval_center_session=${id}` }), '/approvals')).toBe(id);
    const ended = response();
    await plain.end(ended, opened, '/approvals');
    expect(cookiesOf(ended)[0]).toMatch(/; Path=\/approvals\/; Max-Age=0$/);
    // __Host- cookies must be Path=/: behind TLS under a path the name is __Secure-.
    const secure = new PageSignIns(memorySignInStore(), { ttlMs: 60_000, secure: true });
    const tls = response();
    await secure.open(tls, ada, '/approvals');
    expect(cookiesOf(tls)[0]).toMatch(
      /^__Secure-approval_center_session=.*; Path=\/approvals\/; .*; Secure$/,
    );
    const tlsId = cookiesOf(tls)[0]?.split(';')[0]?.split('=')[1] ?? '';
    const back = request({ cookie: `__Secure-approval_center_session=${tlsId}` });
    expect(secure.idOf(back, '/approvals')).toBe(tlsId);
    expect(secure.idOf(back)).toBeUndefined();
  });

  it('takes a write only with the sign-in CSRF token', async () => {
    const signIns = new PageSignIns(memorySignInStore(), { ttlMs: 60_000, secure: false });
    const signIn = await signIns.open(response(), ada);
    expect(() => checkCsrf(request({ [CSRF_HEADER]: signIn.csrfToken }), signIn)).not.toThrow();
    for (const headers of [{}, { [CSRF_HEADER]: 'forged' }] as Array<Record<string, string>>) {
      let refused: unknown;
      try {
        checkCsrf(request(headers), signIn);
      } catch (error) {
        refused = error;
      }
      expect(ApprovalCenterError.hasCode(refused, 'forbidden')).toBe(true);
    }
  });

  it('ends at sign-out, at expiry, when the key is rotated, and when the token changes', async () => {
    let live = { keyId: 'k1', roles: ['operator', 'finance'] };
    const store = memorySignInStore((name) => (name === 'bob' ? live : undefined));
    const signIns = new PageSignIns(store, { ttlMs: 60_000, secure: false, token: 'shared' });
    const idOf = (res: ServerResponse) => cookiesOf(res)[0]?.split(';')[0]?.split('=')[1] ?? '';

    const out = response();
    const signedOut = await signIns.open(out, ada);
    await signIns.end(response(), signedOut);
    expect(await signIns.byId(idOf(out))).toBeNull();

    const expiring = new PageSignIns(store, { ttlMs: -1, secure: false });
    const gone = response();
    await expiring.open(gone, ada);
    expect(await expiring.byId(idOf(gone))).toBeNull();

    const keyed = response();
    await signIns.open(keyed, {
      name: 'bob',
      access: 'operator',
      roles: ['operator'],
      signedInWith: 'key',
      keyId: 'k1',
    });
    // A key's sign-in takes the operator's roles as they are now.
    expect((await signIns.byId(idOf(keyed)))?.roles).toEqual(['operator', 'finance']);
    live = { keyId: 'k2', roles: ['operator'] };
    expect(await signIns.byId(idOf(keyed))).toBeNull();

    const withToken = response();
    await signIns.open(withToken, { ...ada, signedInWith: 'token' });
    expect(await signIns.byId(idOf(withToken))).not.toBeNull();
    const changed = new PageSignIns(store, { ttlMs: 60_000, secure: false, token: 'new' });
    expect(await changed.byId(idOf(withToken))).toBeNull();
  });
});

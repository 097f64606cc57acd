import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { readJson, sendJson } from '../src/http/index.js';
import {
  ApprovalCenterError,
  createApprovalCenter,
  type ErrorResponse,
  memorySignInStore,
  type PageSignInIdentity,
  PageSignIns,
} from '../src/index.js';

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

/** Serves `handler` on a free loopback port; the base URL without a trailing slash. */
async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('createApprovalCenter mounted under a path in node:http', () => {
  it('serves the page and its files under the path, with relative links', async () => {
    const base = await serve(createApprovalCenter({ basePath: '/approvals/' }));
    const page = await fetch(`${base}/approvals/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<script type="module" src="app.js">');
    expect(html).not.toMatch(/(src|href)="\//);
    const script = await fetch(`${base}/approvals/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('text/javascript');
    expect(await script.text()).not.toMatch(/['`"]\/api\//);
  });

  it('redirects the bare path to its folder, keeping the query', async () => {
    const base = await serve(createApprovalCenter({ basePath: '/approvals' }));
    const bare = await fetch(`${base}/approvals?view=recent`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/approvals/?view=recent');
  });

  it('answers paths outside it 404, or passes them to next', async () => {
    const center = createApprovalCenter({ basePath: '/approvals' });
    const alone = await serve(center);
    const outside = await fetch(`${alone}/approvalsX/app.js`);
    expect(outside.status).toBe(404);
    expect(((await outside.json()) as ErrorResponse).error.code).toBe('not_found');
    const beside = await serve((req, res) => center(req, res, () => res.end('the app')));
    expect(await (await fetch(`${beside}/other`)).text()).toBe('the app');
    expect((await fetch(`${beside}/approvals/style.css`)).status).toBe(200);
  });

  it("gives the app's routes the path inside the center and answers their errors", async () => {
    const base = await serve(
      createApprovalCenter({
        basePath: '/approvals',
        routes: async (req, res, url) => {
          if (url.pathname === '/api/echo' && req.method === 'POST') {
            sendJson(res, 200, await readJson(req));
            return true;
          }
          if (url.pathname === '/api/broken') throw new Error('a bug');
          return false;
        },
        onError: (message) => errors.push(message),
      }),
    );
    const errors: string[] = [];
    const echo = await fetch(`${base}/approvals/api/echo`, { method: 'POST', body: '{"a":1}' });
    expect(await echo.json()).toEqual({ a: 1 });
    const bad = await fetch(`${base}/approvals/api/echo`, { method: 'POST', body: '{' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as ErrorResponse).error.code).toBe('invalid_json');
    const broken = await fetch(`${base}/approvals/api/broken`);
    expect(broken.status).toBe(500);
    expect(((await broken.json()) as ErrorResponse).error).toEqual({
      code: 'internal',
      message: 'internal error; the server log has the details',
    });
    expect(errors).toEqual(['GET /approvals/api/broken: a bug']);
    expect((await fetch(`${base}/approvals/api/none`)).status).toBe(404);
  });

  it('refuses a write to a page file, and a basePath that is no path', async () => {
    const base = await serve(createApprovalCenter({ basePath: '/approvals' }));
    const post = await fetch(`${base}/approvals/app.js`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(() => createApprovalCenter({ basePath: 'approvals' })).toThrow(ApprovalCenterError);
  });
});

describe('createApprovalCenter mounted in Express', () => {
  /** An Express app of its own routes with the center mounted by `mount`. */
  async function appWith(mount: (app: express.Express) => void): Promise<string> {
    const app = express();
    app.get('/', (_req, res) => void res.send('the app itself'));
    mount(app);
    app.get('/after', (_req, res) => void res.send('after the center'));
    return serve(app);
  }

  it("serves the page under app.use's mount path, which Express takes off itself", async () => {
    const base = await appWith((app) => app.use('/approvals', createApprovalCenter({})));
    const page = await fetch(`${base}/approvals/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module" src="app.js">');
    expect((await fetch(`${base}/approvals/style.css`)).status).toBe(200);
    const bare = await fetch(`${base}/approvals?view=recent`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/approvals/?view=recent');
    expect(await (await fetch(`${base}/`)).text()).toBe('the app itself');
    expect((await fetch(`${base}/approvals/nothing`)).status).toBe(404);
  });

  it("as middleware with a basePath, passes the app's other paths on to its routes", async () => {
    const paths: string[] = [];
    const base = await appWith((app) =>
      app.use(
        createApprovalCenter({
          basePath: '/approvals',
          routes: async (_req, res, url) => {
            paths.push(url.pathname);
            res.end('routed');
            return true;
          },
        }),
      ),
    );
    expect(await (await fetch(`${base}/after`)).text()).toBe('after the center');
    expect(await (await fetch(`${base}/approvals/api/pauses`)).text()).toBe('routed');
    expect(paths).toEqual(['/api/pauses']);
    expect((await fetch(`${base}/approvals/`)).status).toBe(200);
  });
});

describe("createApprovalCenter with the app's own sign-in", () => {
  /** The app's sessions: its own cookie names who signed in on its own sign-in page. */
  const appSessions = new Map([
    ['s-alice', { email: 'alice@example.com', groups: ['operator', 'finance'] }],
    ['s-norole', { email: 'bob@example.com', groups: [] }],
  ]);

  /**
   * An Express app whose own middleware checks its cookie and sets `x-app-user`, with the
   * center under /approvals answering who `authenticate` says called.
   */
  async function appWithSignIn(): Promise<{ base: string; errors: string[] }> {
    const errors: string[] = [];
    const app = express();
    app.use((req, _res, next) => {
      delete req.headers['x-app-user'];
      const id = /(?:^|; )app_session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      const user = id === undefined ? undefined : appSessions.get(id);
      if (user) req.headers['x-app-user'] = JSON.stringify(user);
      next();
    });
    app.use(
      '/approvals',
      createApprovalCenter({
        authenticate: (req) => {
          const header = req.headers['x-app-user'];
          if (typeof header !== 'string') return undefined;
          const user = JSON.parse(header) as { email: string; groups: string[] };
          return { name: user.email, roles: user.groups };
        },
        routes: async (_req, res, url, { operator, mountPath }) => {
          if (url.pathname !== '/api/whoami') return false;
          sendJson(res, 200, { operator: operator ?? null, mountPath });
          return true;
        },
        onError: (message) => errors.push(message),
      }),
    );
    return { base: await serve(app), errors };
  }

  it('gives the routes the operator its sign-in found, and the mount path', async () => {
    const { base } = await appWithSignIn();
    const signedIn = await fetch(`${base}/approvals/api/whoami`, {
      headers: { cookie: 'app_session=s-alice' },
    });
    expect(await signedIn.json()).toEqual({
      operator: {
        name: 'alice@example.com',
        access: 'operator',
        roles: ['operator', 'finance'],
      },
      mountPath: '/approvals',
    });
    // A header sent by the caller is not the app's word: its middleware removed it.
    const forged = await fetch(`${base}/approvals/api/whoami`, {
      headers: { 'x-app-user': JSON.stringify({ email: 'mallory', groups: ['admin'] }) },
    });
    expect(await forged.json()).toEqual({ operator: null, mountPath: '/approvals' });
  });

  it('answers a sign-in with no role 403, and serves the page without asking', async () => {
    const { base } = await appWithSignIn();
    const noRole = await fetch(`${base}/approvals/api/whoami`, {
      headers: { cookie: 'app_session=s-norole' },
    });
    expect(noRole.status).toBe(403);
    expect(((await noRole.json()) as ErrorResponse).error.code).toBe('forbidden');
    expect(
      (await fetch(`${base}/approvals/`, { headers: { cookie: 'app_session=s-norole' } })).status,
    ).toBe(200);
  });
});

describe('page sign-ins of the center mounted in Express', () => {
  it('sets the cookie for the mount path, and finds it again there', async () => {
    const signIns = new PageSignIns(memorySignInStore(), { ttlMs: 60_000, secure: false });
    const app = express();
    app.use(
      '/approvals',
      createApprovalCenter({
        routes: async (req, res, url, { mountPath }) => {
          if (url.pathname === '/api/sign-in') {
            const who: PageSignInIdentity = {
              name: 'ada',
              access: 'admin',
              roles: ['admin'],
              signedInWith: 'oidc',
            };
            await signIns.open(res, who, mountPath);
            sendJson(res, 200, { signedIn: true });
            return true;
          }
          const id = signIns.idOf(req, mountPath);
          const session = id === undefined ? null : await signIns.byId(id);
          sendJson(res, 200, { name: session?.name ?? null });
          return true;
        },
      }),
    );
    const base = await serve(app);
    const signIn = await fetch(`${base}/approvals/api/sign-in`, { method: 'POST' });
    const cookie = signIn.headers.get('set-cookie') ?? '';
    expect(cookie).toContain('; Path=/approvals/;');
    const session = await fetch(`${base}/approvals/api/session`, {
      headers: { cookie: cookie.split(';')[0] ?? '' },
    });
    expect(await session.json()).toEqual({ name: 'ada' });
  });
});

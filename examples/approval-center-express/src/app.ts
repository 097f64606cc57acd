import type { IncomingMessage } from 'node:http';
import {
  createApprovalCenter,
  executiveFlows,
  memorySignInStore,
  type Oidc,
  PageSignIns,
} from '@x/approval-center';
import { createExecutive, type ExecutiveStorage, type FlowContext, type Model } from '@x/executive';
import { textOf } from '@x/wire';
import express, { type Express } from 'express';
import { agentKinds, gated, startRun } from './agent.js';
import { AppSignIn } from './sign-in.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Where the runs and questions are (`sqlExecutiveStorage`, migrated). */
  storage: ExecutiveStorage;
  /** The agent's model. */
  model: Model;
  /**
   * An OpenID provider the approval center's page may sign in with, besides the app's form,
   * and the address people open the app at (the provider sends them back under it).
   */
  oidc?: { oidc: Oidc; publicUrl: string } | undefined;
}

/** Where the app mounts the approval center. */
const MOUNT = '/approvals';

/** The app, and how to stop its worker and the approval center. */
export interface App {
  app: Express;
  close(): Promise<void>;
}

/**
 * An app with its own pages and sign-in: `POST /trips` starts an agent run that books a trip
 * once a person approves it at `/approvals/`, and `GET /trips/:id` shows how it ended. Its
 * worker resumes approved runs in this process.
 */
export function createApp({ storage, model, oidc }: AppOptions): App {
  const flow: FlowContext = { storage, events: { wants: () => false, record: async () => {} } };
  const signIn = new AppSignIn();
  // The provider's sign-ins, opened by the center's OpenID Connect routes, scoped to its path.
  const secure = oidc !== undefined && new URL(oidc.publicUrl).protocol === 'https:';
  const providerSignIns = new PageSignIns(memorySignInStore(), { ttlMs: 8 * 3_600_000, secure });
  const providerSignInOf = async (req: IncomingMessage) => {
    const id = oidc && providerSignIns.idOf(req, MOUNT);
    return (id && (await providerSignIns.byId(id))) || undefined;
  };
  const authenticate = async (req: IncomingMessage) =>
    signIn.authenticate(req) ?? (await providerSignInOf(req));
  const center = createApprovalCenter({
    authenticate,
    // The questions and runs of the app's executive; each answer goes through its flows.
    questions: { storage, gatedTools: gated, flows: executiveFlows(flow, gated) },
    ...(oidc && {
      oidc: { provider: oidc.oidc, sessions: providerSignIns },
      publicUrl: oidc.publicUrl,
    }),
  });

  // What each completed run's agent said last (a real app would keep it in its own table).
  const said = new Map<string, string>();
  const app = express();
  app.use(signIn.routes(oidc && `${MOUNT}/auth/oidc/login`));
  // The page is the app's: a visitor who has not signed in goes to the app's sign-in first.
  app.use(MOUNT, async (req, res, next) => {
    // The API answers 401 itself; the provider's routes are how one signs in.
    if (/^\/(api|auth\/oidc)\//.test(req.path) || (await authenticate(req))) return next();
    res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
  });
  app.use(MOUNT, center);

  app.get('/', (req, res) => {
    const who = signIn.sessionOf(req)?.person.name;
    res.type('html').send(`<!doctype html><title>Trips</title>
<p id="who">${who ? `Signed in as ${who}` : '<a href="/login">Sign in</a>'}</p>
<form method="post" action="/trips"><input id="request" name="request" value="Book me a trip to Porto">
<button id="book">Book</button></form><p><a href="/approvals/">Approvals</a></p>`);
  });
  app.post('/trips', express.urlencoded({ extended: false }), async (req, res, next) => {
    const person = signIn.sessionOf(req)?.person;
    if (!person) return void res.redirect(303, '/login?next=/');
    try {
      const request = String(req.body?.request ?? '').slice(0, 500) || 'Book me a trip';
      const { runId } = await startRun(flow, model, request, person.name);
      center.poke();
      res.redirect(303, `/trips/${runId}`);
    } catch (error) {
      next(error);
    }
  });
  app.get('/trips/:runId', async (req, res, next) => {
    try {
      const run = await storage.runs().get(req.params.runId);
      if (!run) return void res.status(404).type('text').send('no such trip');
      res.type('html').send(`<!doctype html><title>Trip</title>
<p>Run <span id="status">${run.status}</span></p><p id="result">${htmlText(said.get(run.runId) ?? '')}</p>`);
    } catch (error) {
      next(error);
    }
  });

  // The worker: claims each approved run and resumes it, in this process.
  const stop = new AbortController();
  const executive = createExecutive({ storage, kinds: agentKinds(model) });
  const working = executive.work({
    signal: stop.signal,
    onEvent: (event) => {
      if (event.type !== 'run-resumed') return;
      const last = event.result.status === 'completed' ? event.result.messages.at(-1) : undefined;
      if (last) said.set(event.result.runId, textOf(last));
      center.poke();
    },
  });
  return {
    app,
    async close() {
      stop.abort();
      await working;
      await center.close();
    },
  };
}

function htmlText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

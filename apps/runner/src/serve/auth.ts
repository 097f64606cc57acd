import type { IncomingMessage } from 'node:http';
import type { AnswerOptions, Identity } from '@x/askuser';
import { osUserName } from '../cli/os-user.js';
import { forbiddenError } from '../errors.js';
import type { Storage } from '../storage/index.js';
import type { AccessRole } from '../storage/operators.js';
import { presentedToken, sameSecret } from './http.js';
import { HttpError } from './http-error.js';
import { fromLocalSocket } from './local-socket.js';

/** Who sent a request, as the API acts on it. */
export interface Caller {
  /** The name recorded with an answer (`null`: not known). */
  name: string | null;
  access: AccessRole;
  /** An operator's identity, for the store's audience check; none for an admin. */
  identity?: Identity;
  /**
   * `key` (an operator's API key), `token` (the shared --token), `local` (no key, loopback),
   * `os-user` (over the data folder's socket, as the CLI).
   */
  signedInWith: 'key' | 'token' | 'local' | 'os-user';
  /** `page` when the browser's cookie carried the key, `cli` over the socket, else `api`. */
  channel: 'page' | 'api' | 'cli';
}

/** How a server signs requests in: its shared token and the name of who answers through it. */
export interface SignIn {
  storage: Storage;
  token: string | undefined;
  operator: string | null;
}

const unauthorized = (why: string) =>
  new HttpError(
    401,
    'unauthorized',
    `${why}: send "Authorization: Bearer KEY" (a key from \`runner operators add\`, or the server's --token), or open /?token=KEY once in the browser`,
  );

/** True when `key` signs a request in: the shared token, or a live operator's key. */
export async function acceptsKey(signIn: SignIn, key: string): Promise<boolean> {
  if (signIn.token && sameSecret(key, signIn.token)) return true;
  return (await signIn.storage.operators().authenticate(key)) !== undefined;
}

/**
 * Who sent `req`: the folder's owner over its socket, a live operator by their key, an admin by the shared token, or, when the
 * server has neither a token nor live operators, the one local operator as an admin.
 * @throws {HttpError} 401 for a missing, wrong, rotated or revoked key.
 */
export async function callerOf(signIn: SignIn, req: IncomingMessage): Promise<Caller> {
  // Only the data folder's owner can open its socket: they administer it, as the CLI does.
  if (fromLocalSocket(req)) {
    return { name: osUserName(), access: 'admin', signedInWith: 'os-user', channel: 'cli' };
  }
  const key = presentedToken(req);
  // A browser names the (checked) origin of its writes; a script calling the API does not.
  const channel = req.headers.origin === undefined ? 'api' : 'page';
  if (key === undefined) {
    if (signIn.token || (await signIn.storage.operators().anyLive())) {
      throw unauthorized('this server needs a key');
    }
    return { name: signIn.operator, access: 'admin', signedInWith: 'local', channel };
  }
  if (signIn.token && sameSecret(key, signIn.token)) {
    return { name: signIn.operator, access: 'admin', signedInWith: 'token', channel };
  }
  const operator = await signIn.storage.operators().authenticate(key);
  if (!operator)
    throw unauthorized(
      "this key is not the server's token nor a live operator's (unknown, rotated or revoked)",
    );
  const { name, roles, access } = operator;
  return {
    name,
    access,
    ...(access === 'admin' ? {} : { identity: { name, roles } }),
    signedInWith: 'key',
    channel,
  };
}

/**
 * How `caller` answers through the store: an admin by name (nothing checked), an operator
 * with their identity (the store admits only each question's audience).
 * @throws a `forbidden` error for a viewer.
 */
export function answererOf(caller: Caller): AnswerOptions {
  if (caller.access === 'viewer') {
    throw forbiddenError(`${caller.name} is a viewer: viewers read questions, they do not answer`);
  }
  const how = { signedInWith: caller.signedInWith, channel: caller.channel };
  return caller.identity
    ? { ...how, identity: caller.identity }
    : { ...how, answeredBy: caller.name };
}

/** @throws a `forbidden` error unless `caller` is an admin. */
export function requireAdmin(caller: Caller, doing: string): void {
  if (caller.access !== 'admin') {
    throw forbiddenError(
      `only an admin may ${doing}; ${caller.name} is ${caller.access === 'viewer' ? 'a viewer' : 'an operator'}`,
    );
  }
}

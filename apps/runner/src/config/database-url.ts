import { usageError } from '../errors.js';

const FORM = 'give postgres://USER@HOST:PORT/DATABASE';

/** The URL for messages: scheme, host, port and path, never the user or password. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'the DATABASE_URL server';
  }
}

/**
 * Why `text` does not parse as a URL, naming the part that is wrong; never echoes what may be
 * a password.
 */
function unparsable(name: string, text: string): string {
  const parts = /^([a-z][a-z\d+.-]*):\/\/([^/?#]*)/i.exec(text);
  if (!parts) return `${name} is not a URL: ${FORM}`;
  const authority = parts[2] ?? '';
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  if (hostPort.includes(',')) {
    return `${name} names several hosts; the runner connects to one: ${FORM}`;
  }
  const port = /^(?:\[[^\]]*\]|[^:]*):(.*)$/.exec(hostPort)?.[1];
  if (port !== undefined && /^\d+$/.test(port)) {
    return `${name} has port ${port}, out of range: a port is a number from 1 to 65535`;
  }
  if (port !== undefined) return `${name}'s port is not a number: ${FORM}`;
  return `${name} is not a valid URL (check the host name): ${FORM}`;
}

/**
 * Parses a PostgreSQL URL a person gave (`name` says which setting), refusing what would
 * connect somewhere else than meant: not a URL, another scheme, a port out of range, no
 * database name (the driver would pick one named after the OS user), a bad connect_timeout.
 */
export function parseDatabaseUrl(name: string, text: string): URL {
  // An '@' after where the host seemed to end, or a '#': a password with '#', '?' or '/'
  // cut the URL short, and what looks like its host or port is part of the password.
  const authority = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i.exec(text)?.[0] ?? '';
  if (
    text.includes('#') ||
    (!authority.includes('@') && text.indexOf('@', authority.length) >= 0)
  ) {
    throw usageError(
      `${name} does not parse as meant: percent-encode the characters # ? / @ : in the user name or password (# as %23), then ${FORM}`,
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(unparsable(name, text));
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw usageError(`${name} ${describeUrl(text)} is not a postgres URL: ${FORM}`);
  }
  if (url.port === '0') {
    throw usageError(`${name} has port 0, out of range: a port is a number from 1 to 65535`);
  }
  if (decodeURIComponent(url.pathname.slice(1)) === '') {
    throw usageError(
      `${name} ${describeUrl(text)} names no database: ${FORM}, with a database of the runner's own (e.g. made with \`createdb runner\`)`,
    );
  }
  connectTimeoutOf(url, name);
  return url;
}

/** A connect timeout's seconds: above 0 and up to an hour (unlike libpq, 0 is refused). */
export function connectTimeoutSeconds(text: string): number | undefined {
  const seconds = Number(text);
  return text.trim() !== '' && Number.isFinite(seconds) && seconds > 0 && seconds <= 3600
    ? seconds
    : undefined;
}

/**
 * The URL's `connect_timeout` in seconds, undefined when it gives none (PGCONNECT_TIMEOUT
 * then, see config.ts); every command gives up after it.
 */
export function connectTimeoutOf(url: URL, name = 'DATABASE_URL'): number | undefined {
  const given = url.searchParams.get('connect_timeout');
  if (given === null || given === '') return undefined;
  const seconds = connectTimeoutSeconds(given);
  if (seconds === undefined) {
    throw usageError(
      `${name}'s connect_timeout takes a number of seconds above 0 and up to 3600, not "${given}"`,
    );
  }
  return seconds;
}

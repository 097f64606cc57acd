import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { ApprovalCenterError } from '../errors.js';
import { baseHeaders } from './send.js';

/** The page, built into the package's dist/web (found the same from src/ and dist/). */
const webDir = new URL('../../dist/web/', import.meta.url);

const assets: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  '/favicon.ico': { file: 'favicon.ico', type: 'image/x-icon' },
};

// The page never needs inline script or markup from data: if a question's text were ever
// put into the DOM as HTML by mistake, the browser would still refuse to run it.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// The page's compiled modules (web/src/*.ts → dist/web/*.js): plain names only, so a
// path can never leave the folder.
const moduleFile = /^\/([a-z][a-z-]*\.js)$/;

function assetFor(pathname: string): { file: string; type: string } | undefined {
  const known = assets[pathname];
  if (known) return known;
  const match = moduleFile.exec(pathname);
  return match?.[1] ? { file: match[1], type: 'text/javascript; charset=utf-8' } : undefined;
}

/** True when `pathname` is one of the page's files. */
export function isAsset(pathname: string): boolean {
  return assetFor(pathname) !== undefined;
}

/** Sends one of the page's files. */
export async function sendAsset(
  res: ServerResponse,
  pathname: string,
  head: boolean,
): Promise<void> {
  const asset = assetFor(pathname);
  if (!asset) throw new Error(`not an asset: ${pathname}`);
  let body: Buffer;
  try {
    body = await readFile(new URL(asset.file, webDir));
  } catch (error) {
    if (!(pathname in assets) && pathname !== '/app.js') {
      throw new ApprovalCenterError('not_found', `nothing at ${pathname}`);
    }
    throw new Error(
      `the page is not built (${asset.file} missing in ${webDir.pathname}): build @x/approval-center`,
      {
        cause: error,
      },
    );
  }
  res.writeHead(200, {
    ...baseHeaders,
    'cache-control': 'no-cache',
    'content-type': asset.type,
    'content-length': body.length,
    'content-security-policy': CSP,
    'x-frame-options': 'DENY',
  });
  res.end(head ? undefined : body);
}

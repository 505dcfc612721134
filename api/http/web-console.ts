import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Next } from 'koa';

/** Where `npm install` / `npm start` build the web console (web/vite.config.ts). */
export const WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
};

/**
 * The Content-Security-Policy of every page the server sends (the console, /api/docs): scripts
 * only from this origin as files, never inline. Mantine sets styles inline; images are blob: URLs
 * made from authorised thumbnail fetches.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' blob: data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Switchyard</title></head><body>
<h1>Switchyard</h1><p>The web console is not built. Run <code>npm install</code> (or <code>npm start</code>, which builds it when missing),
or build it alone with <code>npm run build:web</code>, then reload this page.</p>
<p>The API is at <a href="/api/docs">/api/docs</a>.</p></body></html>`;

/**
 * The web console: GET and HEAD on every path outside `/api` answer a file of web/dist or, for an
 * app route such as `/tasks/123`, its index.html (the app routes in the browser). `/api/...` is
 * never served from here, so an unknown API path stays a problem body. Without a build, `/`
 * answers a page that says how to make one.
 */
export function webConsole(opts: { oidc: boolean; dist?: string }) {
  const root = path.resolve(opts.dist ?? WEB_DIST);
  // What the sign-in page must know before anyone is signed in, without a request that could fail.
  const meta = `<meta name="switchyard-oidc" content="${opts.oidc ? 'on' : 'off'}">`;
  let indexHtml: { mtimeMs: number; body: string } | undefined;
  const readIndex = (file: string, mtimeMs: number) => {
    if (indexHtml?.mtimeMs !== mtimeMs) indexHtml = { mtimeMs, body: fs.readFileSync(file, 'utf8').replace('<head>', `<head>${meta}`) };
    return indexHtml.body;
  };
  return async (ctx: Context, next: Next): Promise<void> => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.path === '/api' || ctx.path.startsWith('/api/')) return next();
    const index = path.join(root, 'index.html');
    if (!fs.existsSync(index)) {
      ctx.type = 'html';
      ctx.body = NOT_BUILT;
      return;
    }
    let rel: string;
    try {
      rel = decodeURIComponent(ctx.path);
    } catch {
      rel = '/';
    }
    if (rel.includes('\0')) rel = '/';
    const file = path.resolve(root, `.${path.posix.normalize(rel)}`);
    const inside = file.startsWith(root + path.sep);
    const stat = inside ? fs.statSync(file, { throwIfNoEntry: false }) : undefined;
    if (stat?.isFile() && file !== index) {
      ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
      ctx.length = stat.size;
      // Vite names built assets by content hash: they never change under the same name.
      ctx.set('Cache-Control', rel.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      ctx.body = fs.createReadStream(file); // Koa sends no body for HEAD and closes the stream
      return;
    }
    // A missing asset is a 404, not the app: a stale page asking for an old chunk must fail loudly.
    if (file !== index && (rel.startsWith('/assets/') || path.extname(rel))) return next();
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.body = readIndex(index, fs.statSync(index).mtimeMs);
  };
}

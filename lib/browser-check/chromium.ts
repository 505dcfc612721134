/**
 * One headless Chromium per worker for the browser check, launched on first use (Debian's
 * /usr/bin/chromium through playwright-core, never a downloaded browser), a bound on the pages
 * open at once (each page runs a whole Superset frontend, so one or two fit a small host), and one
 * browser context per Superset account kept between dashboards: its session cookie and Superset's
 * static assets are reused, so a dashboard after the first needs no sign-in and no bundle download.
 */
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Why no page could be opened: a reason the check reports as `not_verifiable`, never a failure. */
export class BrowserUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrowserUnavailableError';
  }
}

export interface ChromiumPool {
  /**
   * Runs `fn` on a new page of the context kept under `key` (made by `open` the first time, or
   * after the browser restarted) once one of the pool's page slots is free; the page is closed after.
   */
  withPage<T>(key: string, open: (browser: Browser) => Promise<BrowserContext>, fn: (page: Page) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Contexts kept (one per Superset account): beyond this, the least recently used idle one is closed. */
const MAX_CONTEXTS = 8;

interface KeptContext {
  context: Promise<BrowserContext>;
  browser: Browser;
  /** Pages open in it now: a context in use is never closed. */
  using: number;
}

/** The context kept for `key` in this browser (opened when there is none), the most recently used; beyond MAX_CONTEXTS the least recently used idle one is closed. */
function contextFor(
  contexts: Map<string, KeptContext>,
  key: string,
  b: Browser,
  open: (browser: Browser) => Promise<BrowserContext>,
): KeptContext {
  let kept = contexts.get(key);
  if (!kept || kept.browser !== b) {
    kept = { context: open(b), browser: b, using: 0 };
    contexts.set(key, kept);
    kept.context.catch(() => contexts.delete(key)); // expected: forgotten here; the page awaiting it meets the error
  } else contexts.delete(key); // re-inserted below: the map's order is the use order
  contexts.set(key, kept);
  for (const [k, c] of contexts) {
    if (contexts.size <= MAX_CONTEXTS) break;
    if (c.using || k === key) continue;
    contexts.delete(k);
    c.context.then((x) => x.close()).catch(() => undefined); // expected: an idle context that cannot close holds nothing used again
  }
  return kept;
}

export function chromiumPool(opts: { executablePath: string; pages: number }): ChromiumPool {
  let launched: Promise<Browser> | undefined;
  let busy = 0;
  const waiting: Array<() => void> = [];
  const contexts = new Map<string, KeptContext>();

  const browser = async (): Promise<Browser> => {
    if (!fs.existsSync(opts.executablePath))
      throw new BrowserUnavailableError(`Chromium is not installed at ${opts.executablePath} (BROWSER_CHECK_CHROMIUM)`);
    const current = launched ?? (launched = launch(opts.executablePath));
    try {
      const b = await current;
      if (b.isConnected()) return b;
    } catch (err) {
      launched = undefined;
      throw err;
    }
    launched = undefined; // it crashed since: a new one
    return browser();
  };

  return {
    async withPage(key, open, fn) {
      if (busy >= opts.pages) await new Promise<void>((resolve) => waiting.push(resolve));
      busy++;
      try {
        const kept = contextFor(contexts, key, await browser(), open);
        kept.using++;
        try {
          const page = await (await kept.context).newPage();
          try {
            return await fn(page);
          } finally {
            await page.close().catch(() => undefined); // expected: its browser went away; the check's own answer stands
          }
        } finally {
          kept.using--;
        }
      } finally {
        busy--;
        waiting.shift()?.();
      }
    },
    async close() {
      const b = launched;
      launched = undefined;
      contexts.clear();
      if (b) await (await b.catch(() => undefined))?.close(); // expected: a failed launch has nothing to close (it was the check's)
    },
  };
}

/**
 * Chromium's own sandbox wherever it can run: not as root, where Chromium refuses to start with it
 * (CI and the test machine run as root; the image's worker runs as `node`, with it). WebRTC may
 * send UDP only through the proxy, i.e. none: its STUN and TURN packets would not pass the
 * context's proxy (render.ts) otherwise.
 */
async function launch(executablePath: string): Promise<Browser> {
  const asRoot = process.getuid?.() === 0;
  try {
    return await chromium.launch({
      executablePath,
      chromiumSandbox: !asRoot,
      args: ['--disable-dev-shm-usage', '--webrtc-ip-handling-policy=disable_non_proxied_udp'],
    });
  } catch (err) {
    throw new BrowserUnavailableError(`Chromium at ${executablePath} did not start: ${(err as Error).message.split('\n')[0]}`);
  }
}

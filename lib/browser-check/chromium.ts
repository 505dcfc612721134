/**
 * One headless Chromium per worker for the browser check, launched on first use (Debian's
 * /usr/bin/chromium through playwright-core, never a downloaded browser), and a bound on the pages
 * open at once: each page runs a whole Superset frontend, so one or two fit a small host.
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Why no page could be opened: a reason the check reports as `not_verifiable`, never a failure. */
export class BrowserUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrowserUnavailableError';
  }
}

export interface ChromiumPool {
  /** Runs `fn` with the shared browser once one of the pool's page slots is free. */
  withBrowser<T>(fn: (browser: Browser) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function chromiumPool(opts: { executablePath: string; pages: number }): ChromiumPool {
  let launched: Promise<Browser> | undefined;
  let busy = 0;
  const waiting: Array<() => void> = [];

  const browser = async (): Promise<Browser> => {
    if (!fs.existsSync(opts.executablePath)) throw new BrowserUnavailableError(`Chromium is not installed at ${opts.executablePath} (BROWSER_CHECK_CHROMIUM)`);
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
    async withBrowser(fn) {
      if (busy >= opts.pages) await new Promise<void>((resolve) => waiting.push(resolve));
      busy++;
      try {
        return await fn(await browser());
      } finally {
        busy--;
        waiting.shift()?.();
      }
    },
    async close() {
      const b = launched;
      launched = undefined;
      if (b) await (await b.catch(() => undefined))?.close();
    },
  };
}

async function launch(executablePath: string): Promise<Browser> {
  try {
    return await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  } catch (err) {
    throw new BrowserUnavailableError(`Chromium at ${executablePath} did not start: ${(err as Error).message.split('\n')[0]}`);
  }
}

import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../lib/embedded/free-port.ts';
import { startEmbeddedPostgres } from '../../lib/embedded/postgres.ts';
import { ensureTemporalCli } from '../../lib/embedded/temporal-cli.ts';
import { startTemporalDevServer } from '../../lib/embedded/temporal-dev-server.ts';
import { createLogger } from '../../lib/logger.ts';
import { startGitea } from '../support/gitea/instance.ts';

// A test run starts PostgreSQL, Temporal, Gitea and several Supersets side by side, each on a port
// the OS called free a moment before: another one can take it first (CI lost a run to that). Here
// the first two ports handed out are one a listener already holds, so every server has to notice
// and move on.
vi.mock('../../lib/embedded/free-port.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../lib/embedded/free-port.ts')>();
  return { freePort: vi.fn(real.freePort) };
});

const logger = createLogger('silent', 'embedded-ports-test');
let holder: net.Server;
const held = new Set<net.Socket>();
let taken: number;
let dir: string;

beforeAll(async () => {
  holder = net.createServer((socket) => {
    held.add(socket);
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  taken = (holder.address() as net.AddressInfo).port;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-ports-'));
  fs.chmodSync(dir, 0o755);
});

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => holder.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

function takenTwice(): void {
  const mocked = vi.mocked(freePort);
  mocked.mockClear();
  mocked.mockResolvedValueOnce(taken).mockResolvedValueOnce(taken);
}

describe('servers on ports chosen while others start', () => {
  it('PostgreSQL says why it did not start on a port in use, and moves to another port it chose itself', async () => {
    await expect(startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: taken, logger })).rejects.toThrow(
      /did not start on 127\.0\.0\.1:\d+[\s\S]*(could not bind|already in use)/i,
    );
    takenTwice();
    const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), logger });
    try {
      expect(pg.port).not.toBe(taken);
      expect(vi.mocked(freePort)).toHaveBeenCalledTimes(3);
      expect(pg.url).toContain(`:${pg.port}/`);
    } finally {
      await pg.stop();
    }
  });

  it('the Temporal dev server moves to another port when its first one is taken', async () => {
    takenTwice();
    const server = await startTemporalDevServer({ cli: ensureTemporalCli(), logFile: path.join(dir, 'temporal.log') });
    try {
      expect(server.address).not.toBe(`127.0.0.1:${taken}`);
      expect(vi.mocked(freePort).mock.calls.length).toBeGreaterThanOrEqual(3);
    } finally {
      await server.stop();
    }
  });

  it.skipIf(/^(off|0|false|no)$/i.test(process.env.SWITCHYARD_TEST_GITEA ?? ''))(
    'Gitea moves to another port when the one it was about to serve on is taken',
    async () => {
      takenTwice();
      const gitea = await startGitea({ info() {}, warn() {} });
      try {
        expect(gitea).not.toBeNull();
        expect(new URL(gitea!.info.baseUrl).port).not.toBe(String(taken));
        expect((await fetch(`${gitea!.info.baseUrl}/api/v1/version`)).ok).toBe(true);
      } finally {
        await gitea?.stop();
      }
    },
  );
});

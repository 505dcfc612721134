import net from 'node:net';

/**
 * A TCP port the OS calls free right now. Only a hint: another process starting at the same time
 * (a test run starts PostgreSQL, Temporal, Gitea and several Supersets side by side) can take it
 * before its new owner binds it, so owners that pick ports this way retry on "address in use".
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

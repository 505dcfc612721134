// A throwaway PKI made with Debian's `openssl` at test time: a CA, a server certificate for
// localhost/127.0.0.1 and client certificates, all short-lived and in a temp folder.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface CertFiles {
  cert: string;
  key: string;
}

export interface TestPki {
  dir: string;
  ca: CertFiles;
  server: CertFiles;
  /** Signed by `ca`, for client authentication. */
  client: CertFiles;
  /** A client certificate from another CA: must be refused. */
  strangerClient: CertFiles;
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): CertFiles {
  const files = { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      files.key,
      '-out',
      files.cert,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  return files;
}

function makeLeaf(dir: string, name: string, ca: CertFiles, extensions: string): CertFiles {
  const files = { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  fs.writeFileSync(ext, extensions);
  openssl(
    [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      files.key,
      '-out',
      csr,
      '-subj',
      `/CN=${name}`,
    ],
    dir,
  );
  openssl(
    ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '2', '-out', files.cert, '-extfile', ext],
    dir,
  );
  return files;
}

export function createTestPki(): TestPki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-pki-'));
  const ca = makeCa(dir, 'test-ca');
  const leaf = (usage: string, san?: string) =>
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      `extendedKeyUsage=${usage}`,
      ...(san ? [`subjectAltName=${san}`] : []),
    ].join('\n') + '\n';
  const server = makeLeaf(dir, 'temporal-server', ca, leaf('serverAuth', 'DNS:localhost,DNS:temporal.test,IP:127.0.0.1'));
  const client = makeLeaf(dir, 'switchyard-client', ca, leaf('clientAuth'));
  const stranger = makeCa(dir, 'stranger-ca');
  const strangerClient = makeLeaf(dir, 'stranger-client', stranger, leaf('clientAuth'));
  return { dir, ca, server, client, strangerClient, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

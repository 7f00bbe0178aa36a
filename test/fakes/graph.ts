import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TLSSocket } from 'node:tls';

/**
 * A fake Microsoft Graph for rclone's OneDrive drive query, which has no URL override:
 * rclone reaches https://graph.microsoft.com through HTTPS_PROXY, so this is an HTTP
 * CONNECT proxy on loopback that terminates TLS itself with a certificate for
 * graph.microsoft.com from a throw-away CA (made with Debian's openssl; rclone trusts it
 * through SSL_CERT_FILE) and answers the three calls rclone 1.60 makes: /me/drives,
 * /me/drive and /drives/{id}/root, in Graph's JSON shapes.
 */
export interface FakeGraph {
  /** What to put in the sync tool's environment. */
  env: { HTTPS_PROXY: string; SSL_CERT_FILE: string };
  requests: string[];
  close(): Promise<void>;
}

const DRIVE = { id: 'b!fake-drive-1', name: 'OneDrive', driveType: 'personal' };

export async function startFakeGraph(): Promise<FakeGraph> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fake-graph-'));
  const tls = makeCertificates(dir);
  const requests: string[] = [];
  const graph = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (!req.headers.authorization?.startsWith('Bearer ')) return send(401, { error: { code: 'InvalidAuthenticationToken' } });
    if (req.url === '/v1.0/me/drives') return send(200, { value: [DRIVE] });
    if (req.url === '/v1.0/me/drive') return send(200, DRIVE);
    if (req.url === `/v1.0/drives/${DRIVE.id}/root`) {
      return send(200, { id: 'root', name: 'root', webUrl: 'https://onedrive.example/', parentReference: { driveId: DRIVE.id, driveType: DRIVE.driveType } });
    }
    send(404, { error: { code: 'itemNotFound' } });
  });
  const proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, socket) => {
    if (req.url !== 'graph.microsoft.com:443') return socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    graph.emit('connection', new TLSSocket(socket, { isServer: true, key: tls.key, cert: tls.cert }));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    env: { HTTPS_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, SSL_CERT_FILE: tls.caFile },
    requests,
    close: async () => {
      proxy.closeAllConnections();
      graph.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function makeCertificates(dir: string): { key: Buffer; cert: Buffer; caFile: string } {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=fake-graph-ca');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('graph.key'), '-out', file('graph.csr'), '-subj', '/CN=graph.microsoft.com');
  writeFileSync(file('ext.cnf'), 'subjectAltName=DNS:graph.microsoft.com\n');
  openssl('x509', '-req', '-in', file('graph.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('graph.pem'), '-days', '2', '-extfile', file('ext.cnf'));
  return { key: readFileSync(file('graph.key')), cert: readFileSync(file('graph.pem')), caFile: file('ca.pem') };
}

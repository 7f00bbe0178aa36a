import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TLSSocket } from 'node:tls';

/**
 * A fake of the sign-in service `claude setup-token` exchanges its code with. The CLI's token
 * URL is fixed (https://platform.claude.com/v1/oauth/token) and its custom-URL override only
 * takes approved hosts, so the fake is reached the way a corporate network would be: the CLI
 * honours HTTPS_PROXY and NODE_EXTRA_CA_CERTS. This is a loopback CONNECT proxy that answers
 * every tunnel itself, with a certificate from a throwaway CA made here by openssl.
 *   POST /v1/oauth/token {grant_type: authorization_code, code, state, code_verifier, redirect_uri, client_id, expires_in}
 *     -> 200 {access_token: sk-ant-oat01-..., token_type, expires_in, scope, account, organization} for the expected code,
 *        401 {error: invalid_grant} for any other (the CLI shows "Invalid authorization code").
 *   GET https://api.anthropic.com/api/oauth/usage (Bearer token; what OpenClaw's usage.status asks)
 *     -> the test's `usage(authorization)` answer, else 404.
 */
export interface FakeClaudeOAuth {
  /** http://127.0.0.1:<port>: the value for HTTPS_PROXY. */
  proxyUrl: string;
  /** PEM file of the CA: the value for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** The code (the part before `#`) the token endpoint accepts. */
  code: string;
  token: string;
  /** Every request that came through a tunnel, with the host it was meant for. */
  requests: Array<{ host: string; method: string; path: string; body: unknown }>;
  close(): Promise<void>;
}

export interface FakeOAuthOptions {
  code: string;
  token: string;
  /** The plan-usage endpoint's answer for a request with this Authorization header. */
  usage?: (authorization: string) => { status: number; body: unknown } | undefined;
}

export async function startFakeClaudeOAuth(options: FakeOAuthOptions): Promise<FakeClaudeOAuth> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fake-claude-oauth-'));
  const { key, cert, caFile } = makeCertificates(dir);
  const requests: FakeClaudeOAuth['requests'] = [];

  const app = createHttpServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text
      }
      requests.push({ host: String(req.headers.host ?? ''), method: req.method ?? '', path: req.url ?? '', body });
      answer(req, res, body, options);
    });
  });

  const tunnels = new Set<Socket>();
  const proxy = createNetServer((socket) => {
    tunnels.add(socket);
    socket.on('close', () => tunnels.delete(socket));
    socket.once('data', (head) => {
      // Only CONNECT: the CLI speaks TLS inside the tunnel.
      if (!/^CONNECT [^\s]+ HTTP\/1\.[01]\r\n/.test(head.toString('latin1'))) return void socket.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n', () => {
        const tls = new TLSSocket(socket, { isServer: true, key, cert });
        app.emit('connection', tls);
      });
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    caFile,
    code: options.code,
    token: options.token,
    requests,
    close: async () => {
      for (const t of tunnels) t.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      app.closeAllConnections();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function answer(req: IncomingMessage, res: ServerResponse, body: unknown, options: FakeOAuthOptions): void {
  const send = (status: number, value: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake' });
    res.end(JSON.stringify(value));
  };
  const usage = req.method === 'GET' && req.url === '/api/oauth/usage' ? options.usage?.(String(req.headers.authorization ?? '')) : undefined;
  if (usage) return send(usage.status, usage.body);
  if (req.method === 'POST' && req.url === '/v1/oauth/token') {
    const b = (body ?? {}) as Record<string, unknown>;
    if (b.grant_type !== 'authorization_code' || typeof b.code_verifier !== 'string') return send(400, { error: 'invalid_request' });
    if (b.code !== options.code) return send(401, { error: 'invalid_grant', error_description: 'Invalid authorization code' });
    return send(200, {
      access_token: options.token,
      token_type: 'Bearer',
      expires_in: typeof b.expires_in === 'number' ? b.expires_in : 31536000,
      scope: 'user:inference',
      account: { uuid: '00000000-0000-4000-8000-000000000001', email_address: 'dev@example.com' },
      organization: { uuid: '00000000-0000-4000-8000-000000000002' },
    });
  }
  send(404, { error: { type: 'not_found_error', message: `fake: no route ${req.method} ${req.url}` } });
}

/** A throwaway CA and a server certificate for the hosts the CLI talks to. */
function makeCertificates(dir: string): { key: string; cert: string; caFile: string } {
  const file = (name: string) => path.join(dir, name);
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=space-test-ca', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=platform.claude.com', '-keyout', file('server.key'), '-out', file('server.csr'));
  writeFileSync(file('ext.cnf'), 'subjectAltName=DNS:platform.claude.com,DNS:claude.com,DNS:*.claude.com,DNS:claude.ai,DNS:*.claude.ai,DNS:api.anthropic.com,DNS:*.anthropic.com\nextendedKeyUsage=serverAuth\n');
  run('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', file('ext.cnf'), '-out', file('server.pem'));
  return { key: readFileSync(file('server.key'), 'utf8'), cert: readFileSync(file('server.pem'), 'utf8'), caFile: file('ca.pem') };
}

import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveOnLoopback } from './loopback-server.js';

/**
 * A fake OAuth 2 authorization server on loopback, in the wire format of the real ones:
 * - for rclone (RCLONE_DRIVE_AUTH_URL / _TOKEN_URL and the OneDrive pair): `GET /auth`
 *   answers 302 to the redirect_uri with `state` and a fresh one-time `code` (or
 *   `error=access_denied` when told to deny); `POST /token` swaps a code for
 *   `{access_token, token_type, refresh_token, expires_in}` like Google's;
 * - for the deploy host: RFC 8414 metadata at `/.well-known/oauth-authorization-server`,
 *   RFC 7591 registration at `/register`, `GET /authorize` (same as /auth), PKCE S256
 *   checked on `/token` (invalid_grant on a mismatch), a userinfo endpoint.
 * Codes are single-use and bound to their client_id and redirect_uri.
 */
export interface FakeOAuth {
  url: string;
  issuer: string;
  requests: Array<{ method: string; path: string; query: Record<string, string>; form: Record<string, string>; headers: IncomingMessage['headers'] }>;
  /** Access tokens issued so far, in order. */
  issued: string[];
  registeredClients: string[];
  /** Makes /auth answer `error=access_denied` instead of a code. */
  deny: boolean;
  /** The user /userinfo answers for a valid token. */
  user: Record<string, unknown>;
  close(): Promise<void>;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  challenge: string | undefined;
  method: string | undefined;
}

export async function startFakeOAuth(): Promise<FakeOAuth> {
  const codes = new Map<string, IssuedCode>();
  const tokens = new Set<string>();
  let counter = 0;
  const fake: FakeOAuth = {
    url: '',
    issuer: '',
    requests: [],
    issued: [],
    registeredClients: [],
    deny: false,
    user: { sub: 'user-7', name: 'Grace Hopper', email: 'grace@example.com' },
    close: async () => undefined,
  };

  const metadata = () => ({
    issuer: fake.issuer,
    authorization_endpoint: `${fake.url}/authorize`,
    token_endpoint: `${fake.url}/token`,
    registration_endpoint: `${fake.url}/register`,
    userinfo_endpoint: `${fake.url}/userinfo`,
    scopes_supported: ['deploy', 'read'],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
  });

  const authorize = (query: Record<string, string>, res: ServerResponse): void => {
    const redirect = new URL(query.redirect_uri ?? '');
    if (query.state) redirect.searchParams.set('state', query.state);
    if (fake.deny) {
      redirect.searchParams.set('error', 'access_denied');
    } else {
      const code = `code-${++counter}-${randomBytes(6).toString('hex')}`;
      codes.set(code, { clientId: query.client_id ?? '', redirectUri: query.redirect_uri ?? '', challenge: query.code_challenge, method: query.code_challenge_method });
      redirect.searchParams.set('code', code);
    }
    res.writeHead(302, { location: redirect.toString() }).end();
  };

  const token = (req: IncomingMessage, body: Record<string, string>, res: ServerResponse): void => {
    const form = { ...basicCredentials(req), ...body };
    if (form.grant_type !== 'authorization_code') return json(res, 400, { error: 'unsupported_grant_type' });
    const issued = codes.get(form.code ?? '');
    codes.delete(form.code ?? '');
    if (!issued || issued.clientId !== form.client_id || issued.redirectUri !== form.redirect_uri) return json(res, 400, { error: 'invalid_grant' });
    if (issued.challenge !== undefined) {
      const expected = createHash('sha256').update(form.code_verifier ?? '').digest('base64url');
      if (issued.method !== 'S256' || expected !== issued.challenge) return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
    }
    const access = `at-${++counter}-${randomBytes(8).toString('hex')}`;
    tokens.add(access);
    fake.issued.push(access);
    json(res, 200, { access_token: access, token_type: 'Bearer', refresh_token: `rt-${counter}`, expires_in: 3599, scope: 'deploy' });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, form: Record<string, string>): void => {
    const url = new URL(req.url ?? '/', fake.url);
    const query = Object.fromEntries(url.searchParams);
    fake.requests.push({ method: req.method ?? '', path: url.pathname, query, form, headers: req.headers });
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /.well-known/oauth-authorization-server') return json(res, 200, metadata());
    if (route === 'GET /auth' || route === 'GET /authorize') return authorize(query, res);
    if (route === 'POST /token') return token(req, form, res);
    if (route === 'POST /register') {
      const client = `client-${randomBytes(4).toString('hex')}`;
      fake.registeredClients.push(client);
      return json(res, 201, { ...form, client_id: client, client_id_issued_at: Math.floor(Date.now() / 1000), token_endpoint_auth_method: 'none' });
    }
    if (route === 'GET /userinfo') {
      const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      return tokens.has(bearer) ? json(res, 200, fake.user) : json(res, 401, { error: 'invalid_token' });
    }
    json(res, 404, { error: 'not_found' });
  };

  const server = await serveOnLoopback((req, res, body) => handle(req, res, parseForm(req, body)));
  fake.url = server.url;
  fake.issuer = server.url;
  fake.close = server.close;
  return fake;
}

/** Client credentials sent as HTTP Basic (Go's oauth2 tries this first), as form fields. */
function basicCredentials(req: IncomingMessage): Record<string, string> {
  const header = req.headers.authorization ?? '';
  if (!header.startsWith('Basic ')) return {};
  const [id, secret] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
  return { client_id: decodeURIComponent(id ?? ''), client_secret: decodeURIComponent(secret ?? '') };
}

function parseForm(req: IncomingMessage, body: string): Record<string, string> {
  if (body === '') return {};
  if ((req.headers['content-type'] ?? '').includes('json')) return JSON.parse(body) as Record<string, string>;
  return Object.fromEntries(new URLSearchParams(body));
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake of the OAuth issuer `codex login --device-auth` talks to (its hidden
 * `--experimental_issuer`), on loopback, with the wire format observed in research
 * (clib-protocol §11):
 *   POST /api/accounts/deviceauth/usercode {client_id}           -> {device_auth_id, user_code, interval: "1"}
 *   POST /api/accounts/deviceauth/token {device_auth_id, user_code} -> 403 while pending,
 *        200 {authorization_code, code_challenge, code_verifier} once approved, 400 when denied
 *   POST /oauth/token (form, grant_type=authorization_code)      -> {id_token, access_token, refresh_token}
 * Tokens are JWT-shaped with the claims codex reads; the signature is fake (codex does not check it).
 */
export interface FakeIssuer {
  url: string;
  requests: Array<{ method: string; path: string; body: string }>;
  /** The user codes issued so far. */
  codes: string[];
  approve(userCode: string): void;
  deny(userCode: string): void;
  /** What /oauth/token handed out. */
  issued: { refresh_token: string; access_exp: number } | undefined;
  close(): Promise<void>;
}

export const FAKE_ISSUER_ACCOUNT = '11111111-2222-3333-4444-555555555555';

export async function startFakeIssuer(): Promise<FakeIssuer> {
  const devices = new Map<string, { userCode: string; state: 'pending' | 'approved' | 'denied'; verifier: string }>();
  const codes: string[] = [];
  const requests: FakeIssuer['requests'] = [];
  const issuer: FakeIssuer = {
    url: '',
    requests,
    codes,
    issued: undefined,
    approve: (code) => void (byCode(code).state = 'approved'),
    deny: (code) => void (byCode(code).state = 'denied'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const byCode = (code: string) => {
    const device = [...devices.values()].find((d) => d.userCode === code);
    if (!device) throw new Error(`fake issuer: no device with code ${code}`);
    return device;
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
    if (route === 'POST /api/accounts/deviceauth/usercode') {
      const id = `dev_${hex(8)}`;
      const userCode = `${letters(4)}-${letters(4)}`;
      devices.set(id, { userCode, state: 'pending', verifier: hex(32) });
      codes.push(userCode);
      return json(res, 200, { device_auth_id: id, user_code: userCode, interval: '1' });
    }
    if (route === 'POST /api/accounts/deviceauth/token') {
      const { device_auth_id } = JSON.parse(body || '{}') as { device_auth_id?: string };
      const device = devices.get(device_auth_id ?? '');
      if (!device) return json(res, 404, { error: 'unknown device' });
      if (device.state === 'pending') return json(res, 403, { error: 'authorization_pending' });
      if (device.state === 'denied') return json(res, 400, { error: 'access_denied' });
      const challenge = createHash('sha256').update(device.verifier).digest('base64url');
      return json(res, 200, { authorization_code: `ac_${hex(12)}`, code_challenge: challenge, code_verifier: device.verifier });
    }
    if (route === 'POST /oauth/token') {
      const form = new URLSearchParams(body);
      if (form.get('grant_type') !== 'authorization_code' || !form.get('code') || !form.get('code_verifier')) return json(res, 400, { error: 'invalid_request' });
      const now = Math.floor(Date.now() / 1000);
      const auth = { chatgpt_account_id: FAKE_ISSUER_ACCOUNT, chatgpt_plan_type: 'pro', chatgpt_user_id: 'user-fake', user_id: 'user-fake' };
      const refresh = `rt_${hex(12)}`;
      const accessExp = now + 10 * 86400;
      issuer.issued = { refresh_token: refresh, access_exp: accessExp };
      return json(res, 200, {
        id_token: jwt({ iss: issuer.url, aud: ['app_EMoamEEZ73f0CkXaXp7hrann'], sub: 'auth0|fake', iat: now, exp: now + 3600, email: 'dev@example.com', email_verified: true, 'https://api.openai.com/auth': auth }),
        access_token: jwt({ iss: issuer.url, aud: ['https://api.openai.com/v1'], sub: 'auth0|fake', iat: now, exp: accessExp, 'https://api.openai.com/auth': auth }),
        refresh_token: refresh,
      });
    }
    json(res, 404, { error: `no route ${route}` });
  };

  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', body });
      handle(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return issuer;
}

function jwt(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'RS256', typ: 'JWT', kid: 'fake' })}.${part(claims)}.${Buffer.from('fake-signature').toString('base64url')}`;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function letters(n: number): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join('');
}

import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveOnLoopback } from './loopback-server.js';

/**
 * A fake GitHub on loopback, in GitHub's wire format (shared/research/connectors-usage.md §2):
 * - the REST API's `GET /user` (Bearer or `token` auth; 401 `Bad credentials` otherwise),
 *   reached directly through SPACE_CODEHOST_API_URL;
 * - the OAuth device flow (`POST /login/device/code`, `POST /login/oauth/access_token`,
 *   form-encoded unless JSON is asked for) and GraphQL's `viewer`, for the real `gh`. gh is
 *   pointed at the host `github.localhost`, which gh reaches over plain HTTP
 *   (http://github.localhost/ and http://api.github.localhost/); with HTTP_PROXY set to this
 *   server, those requests arrive here in absolute form, so no DNS or port 80 is needed.
 * A test approves, denies or expires the pending device login.
 */
export interface FakeGithub {
  url: string;
  /** HTTP_PROXY value that routes gh's requests for github.localhost here. */
  proxy: string;
  requests: Array<{ method: string; host: string; path: string; headers: IncomingMessage['headers']; body: string }>;
  /** Tokens /user accepts, with their user. */
  users: Map<string, { login: string; id: number }>;
  /** Tokens issued by the device flow, in order. */
  issued: string[];
  approve(): void;
  deny(): void;
  expire(): void;
  close(): Promise<void>;
}

export const FAKE_HOST = 'github.localhost';

interface Device {
  code: string;
  status: 'pending' | 'approved' | 'denied' | 'expired';
  token?: string;
}

export async function startFakeGithub(): Promise<FakeGithub> {
  const devices: Device[] = [];
  const fake: FakeGithub = {
    url: '',
    proxy: '',
    requests: [],
    users: new Map([['ghp_valid_token_1234567890', { login: 'octocat', id: 1 }]]),
    issued: [],
    approve: () => setLatest('approved'),
    deny: () => setLatest('denied'),
    expire: () => setLatest('expired'),
    close: async () => undefined,
  };
  function setLatest(status: Device['status']): void {
    const device = devices.at(-1);
    if (!device) throw new Error('no device login to change');
    device.status = status;
  }

  const handle = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
    fake.requests.push({ method: req.method ?? '', host: url.host, path: url.pathname, headers: req.headers, body });
    const route = `${req.method} ${url.pathname}`;
    const form = new URLSearchParams(body);
    const wantsJson = (req.headers.accept ?? '').includes('json');
    if (route === 'POST /login/device/code') {
      const device: Device = { code: randomBytes(20).toString('hex'), status: 'pending' };
      devices.push(device);
      const userCode = `${randomBytes(2).toString('hex')}-${randomBytes(2).toString('hex')}`.toUpperCase();
      return oauthAnswer(res, wantsJson, {
        device_code: device.code,
        user_code: userCode,
        verification_uri: `http://${FAKE_HOST}/login/device`,
        expires_in: '900',
        interval: '1',
      });
    }
    if (route === 'POST /login/oauth/access_token') {
      const device = devices.find((d) => d.code === form.get('device_code'));
      if (!device) return oauthAnswer(res, wantsJson, { error: 'incorrect_device_code' });
      if (device.status === 'pending') return oauthAnswer(res, wantsJson, { error: 'authorization_pending', error_description: 'The authorization request is still pending.' });
      if (device.status === 'denied') return oauthAnswer(res, wantsJson, { error: 'access_denied' });
      if (device.status === 'expired') return oauthAnswer(res, wantsJson, { error: 'expired_token' });
      if (!device.token) {
        device.token = `gho_${randomBytes(18).toString('hex')}`;
        fake.users.set(device.token, { login: 'octocat', id: 1 });
        fake.issued.push(device.token);
      }
      return oauthAnswer(res, wantsJson, { access_token: device.token, token_type: 'bearer', scope: 'repo,gist,read:org' });
    }
    const user = fake.users.get((req.headers.authorization ?? '').replace(/^(Bearer|token) /, ''));
    if (route === 'GET /user' || route === 'GET /api/v3/user') {
      if (!user) return json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
      res.setHeader('X-OAuth-Scopes', 'repo, read:org, gist');
      return json(res, 200, { ...user, node_id: 'MDQ6VXNlcjE=', type: 'User', name: 'The Octocat' });
    }
    if (route === 'POST /graphql' || route === 'POST /api/graphql') {
      if (!user) return json(res, 401, { message: 'Bad credentials' });
      res.setHeader('X-OAuth-Scopes', 'repo, read:org, gist');
      return json(res, 200, { data: { viewer: { login: user.login } } });
    }
    json(res, 404, { message: 'Not Found' });
  };

  const server = await serveOnLoopback(handle);
  fake.url = server.url;
  fake.proxy = server.url;
  fake.close = server.close;
  return fake;
}

function oauthAnswer(res: ServerResponse, wantsJson: boolean, fields: Record<string, string>): void {
  if (wantsJson) return json(res, 200, fields);
  res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }).end(new URLSearchParams(fields).toString());
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

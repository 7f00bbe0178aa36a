import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake of the upstream identity and usage service, on loopback, speaking the contract
 * docs/auth.md documents (POST /auth/start, /auth/status, /auth/consume; GET /me; POST
 * /usage/report). Poll tokens are single-use; a test approves or expires sessions, and can
 * make any path answer a given status a number of times (4xx/5xx injection).
 */
export interface FakeUpstream {
  url: string;
  /** Every request, in order (headers lower-cased, JSON bodies parsed). */
  requests: Array<{ method: string; path: string; headers: Record<string, string | string[] | undefined>; body: unknown }>;
  /** Sessions by auth_session_id. */
  sessions: Map<string, FakeSession>;
  approve(authSessionId: string): void;
  expire(authSessionId: string): void;
  /** The next `times` requests to `path` answer `status` with `body`. */
  inject(path: string, status: number, body?: unknown, times?: number): void;
  /** Add an upstream session the service did not start (the launching shell did). */
  startSession(): FakeSession;
  /** A bearer /me accepts besides issued access tokens (SPACE_API_KEY). */
  acceptApiKey(key: string, userId: string): void;
  close(): Promise<void>;
}

export interface FakeSession {
  id: string;
  pollToken: string;
  status: 'pending' | 'approved' | 'expired';
  consumed: boolean;
}

export const FAKE_USER = { user_id: 'user-42', email: 'ada@example.com', plan: 'team', display_name: 'Ada' };

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const sessions = new Map<string, FakeSession>();
  const bearers = new Map<string, string>();
  const injections: Array<{ path: string; status: number; body: unknown; times: number }> = [];
  const requests: FakeUpstream['requests'] = [];
  let url = '';

  const newSession = (): FakeSession => {
    const session: FakeSession = { id: `as_${hex(8)}`, pollToken: `pt_${hex(16)}`, status: 'pending', consumed: false };
    sessions.set(session.id, session);
    return session;
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: unknown): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    const injected = injections.find((i) => i.path === path && i.times > 0);
    if (injected) {
      injected.times--;
      return send(res, injected.status, injected.body);
    }
    const route = `${req.method} ${path}`;
    if (route === 'POST /auth/start') {
      const s = newSession();
      return send(res, 200, { authorize_url: `${url}/authorize?session=${s.id}`, auth_session_id: s.id, poll_token: s.pollToken });
    }
    if (route === 'POST /auth/status' || route === 'POST /auth/consume') {
      const { auth_session_id, poll_token } = (body ?? {}) as Record<string, unknown>;
      const s = typeof auth_session_id === 'string' ? sessions.get(auth_session_id) : undefined;
      if (!s) return send(res, 404, { detail: 'unknown auth session' });
      if (poll_token !== s.pollToken) return send(res, 401, { detail: 'invalid poll token' });
      if (s.consumed) return send(res, 410, { detail: 'poll token already used' });
      if (route === 'POST /auth/status') return send(res, 200, { status: s.status });
      if (s.status === 'expired') return send(res, 410, { detail: 'auth session expired' });
      if (s.status !== 'approved') return send(res, 409, { detail: 'auth session not approved yet' });
      s.consumed = true;
      const access = `at_${hex(16)}`;
      bearers.set(access, FAKE_USER.user_id);
      return send(res, 200, { access_token: access, refresh_token: `rt_${hex(16)}`, expires_in: 3600, user_id: FAKE_USER.user_id });
    }
    if (route === 'GET /me' || route === 'POST /usage/report') {
      const auth = req.headers.authorization ?? '';
      const user = auth.startsWith('Bearer ') ? bearers.get(auth.slice(7)) : undefined;
      if (!user) return send(res, 401, { detail: 'invalid bearer' });
      return send(res, 200, route === 'GET /me' ? { ...FAKE_USER, user_id: user } : { ok: true });
    }
    send(res, 404, { detail: `no route ${route}` });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // kept as text
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers }, body });
      handle(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const session = (id: string): FakeSession => {
    const s = sessions.get(id);
    if (!s) throw new Error(`fake upstream: no session ${id}`);
    return s;
  };
  return {
    url,
    requests,
    sessions,
    approve: (id) => void (session(id).status = 'approved'),
    expire: (id) => void (session(id).status = 'expired'),
    inject: (path, status, body = { detail: `injected ${status}` }, times = 1) => void injections.push({ path, status, body, times }),
    startSession: newSession,
    acceptApiKey: (key, userId) => void bearers.set(key, userId),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' });
  res.end(text);
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

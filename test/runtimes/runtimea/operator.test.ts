import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { createLogger } from '../../../service/log.js';
import type { PermissionAsk } from '../../../service/runtimes/runtime.js';
import { GatewayOperator } from '../../../service/runtimes/runtimea/operator.js';
import { TurnPermissions } from '../../../service/runtimes/runtimea/turn-permissions.js';

/**
 * The operator connection against a loopback WebSocket server that answers with the frames
 * recorded from the real gateway (test/fixtures/runtimea/2026.9.6/operator/frames.jsonl,
 * test/tools/record-runtimea-operator.ts): the handshake, the gateway starting, a dropped
 * connection, approvals routed by session key, the session's own mode put back.
 */
const recorded = readFileSync(path.resolve(import.meta.dirname, '../../fixtures/runtimea/2026.9.6/operator/frames.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { dir: 'in' | 'out'; frame: any });
const sent = (method: string, nth = 0) => recorded.filter((f) => f.dir === 'out' && f.frame.method === method)[nth]!.frame;
const answer = (method: string, nth = 0) => recorded.find((f) => f.dir === 'in' && f.frame.type === 'res' && f.frame.id === sent(method, nth).id)!.frame;
const event = (name: string, nth = 0) => recorded.filter((f) => f.dir === 'in' && f.frame.event === name)[nth]!.frame;
const log = createLogger('silent');

interface FakeGateway {
  url: string;
  requests: any[];
  sockets: WebSocket[];
  push(frame: unknown): void;
  close(): Promise<void>;
}

/** `reply(req, attempt)`: the answer frame's `ok`/`payload`/`error` for a request (attempt counts connects). */
async function fakeGateway(reply: (req: any, connects: number) => Record<string, unknown> | undefined, options: { silent?: boolean } = {}): Promise<FakeGateway> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => server.once('listening', r));
  const requests: any[] = [];
  const sockets: WebSocket[] = [];
  let connects = 0;
  server.on('connection', (ws) => {
    sockets.push(ws);
    if (!options.silent) ws.send(JSON.stringify(event('connect.challenge')));
    ws.on('message', (data) => {
      const req = JSON.parse(String(data));
      requests.push(req);
      if (req.method === 'connect') connects++;
      const res = reply(req, connects);
      if (res) ws.send(JSON.stringify({ type: 'res', id: req.id, ...res }));
    });
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    sockets,
    push: (frame) => sockets.filter((s) => s.readyState === s.OPEN).forEach((s) => s.send(JSON.stringify(frame))),
    close: () => new Promise((r) => (sockets.forEach((s) => s.terminate()), server.close(() => r(undefined)))),
  };
}

/** The recorded answer of each method the service sends. */
function recordedReplies(req: any): Record<string, unknown> {
  const { ok, payload } = answer(req.method);
  return { ok, payload };
}

let gateway: FakeGateway | undefined;
let operator: GatewayOperator | undefined;
afterEach(async () => {
  await operator?.close();
  await gateway?.close();
});

function operatorOf(g: FakeGateway, token = 'the-token'): GatewayOperator {
  return new GatewayOperator(async () => ({ url: g.url, token }), log);
}

describe('the operator connection (recorded gateway frames)', () => {
  it('answers the challenge with the connect the real gateway took, then calls', async () => {
    gateway = await fakeGateway(recordedReplies);
    operator = operatorOf(gateway);
    expect(await operator.call('sessions.describe', { key: 'agent:main:space-x' })).toEqual({ session: null });
    const { id: _id, ...connect } = gateway.requests[0];
    const { id: _rid, ...real } = sent('connect');
    expect({ ...connect, params: { ...connect.params, auth: { token: '<token>', password: '<token>' } } }).toEqual(real);
    expect(connect.params.auth).toEqual({ token: 'the-token', password: 'the-token' });
  });

  it('a gateway still starting (UNAVAILABLE, startup-sidecars) is asked again after its retryAfterMs', async () => {
    gateway = await fakeGateway((req, connects) =>
      req.method === 'connect' && connects === 1
        ? { ok: false, error: { code: 'UNAVAILABLE', message: 'gateway starting', retryable: true, retryAfterMs: 100, details: { reason: 'startup-sidecars' } } }
        : recordedReplies(req),
    );
    operator = operatorOf(gateway);
    expect(await operator.call('sessions.describe', { key: 'k' })).toEqual({ session: null });
    expect(gateway.requests.filter((r) => r.method === 'connect')).toHaveLength(2);
  });

  it('a refused connect is an error naming the gateway\'s reason; nothing is retried', async () => {
    gateway = await fakeGateway((req) => (req.method === 'connect' ? { ok: false, error: { code: 'INVALID_REQUEST', message: 'unauthorized: gateway token mismatch' } } : recordedReplies(req)));
    operator = operatorOf(gateway);
    await expect(operator.call('sessions.patch', {})).rejects.toThrow('unauthorized: gateway token mismatch');
    expect(gateway.requests.filter((r) => r.method === 'connect')).toHaveLength(1);
  });

  it('a server that never sends the challenge is given up on within the bound', async () => {
    gateway = await fakeGateway(recordedReplies, { silent: true });
    operator = new GatewayOperator(async () => ({ url: gateway!.url, token: 't' }), log, 300);
    await expect(operator.call('sessions.describe', { key: 'k' })).rejects.toThrow('did not complete the operator handshake within 0.3 s');
    await expect.poll(() => gateway!.sockets[0]!.readyState).toBe(gateway.sockets[0]!.CLOSED);
  });

  it('calls made at once share one connection', async () => {
    gateway = await fakeGateway(recordedReplies);
    operator = operatorOf(gateway);
    await Promise.all([operator.call('sessions.describe', { key: 'a' }), operator.call('sessions.describe', { key: 'b' }), operator.call('sessions.describe', { key: 'c' })]);
    expect(gateway.sockets).toHaveLength(1);
    expect(gateway.requests.filter((r) => r.method === 'connect')).toHaveLength(1);
  });

  it('a dropped connection fails what waits on it; the next call connects again', async () => {
    gateway = await fakeGateway((req) => (req.method === 'sessions.describe' ? undefined : recordedReplies(req)));
    operator = operatorOf(gateway);
    const waiting = operator.call('sessions.describe', { key: 'k' });
    await expect.poll(() => gateway!.requests.some((r) => r.method === 'sessions.describe')).toBe(true);
    gateway.sockets[0]!.terminate();
    await expect(waiting).rejects.toThrow(/closed the operator connection/);
    await operator.call('sessions.patch', { key: 'k', permissionMode: null });
    expect(gateway.sockets).toHaveLength(2);
  });

  it('the connection closes when the last turn that asks releases it', async () => {
    gateway = await fakeGateway(recordedReplies);
    operator = operatorOf(gateway);
    operator.retain();
    operator.retain();
    await operator.call('sessions.describe', { key: 'k' });
    operator.release();
    await new Promise((r) => setTimeout(r, 50));
    expect(gateway.sockets[0]!.readyState).toBe(gateway.sockets[0]!.OPEN);
    operator.release();
    await expect.poll(() => gateway!.sockets[0]!.readyState).toBe(gateway.sockets[0]!.CLOSED);
  });
});

describe('a turn\'s permissions over the connection', () => {
  const approval = event('exec.approval.requested');
  const key: string = approval.payload.request.sessionKey;

  it('accept_edits: the session goes guarded, only its own approvals are asked, the answer is resolved, its own mode comes back', async () => {
    // The session had a mode of its own (the recorded describe after the patch: guarded... here read-only).
    const own = structuredClone(answer('sessions.describe', 1));
    own.payload.session.permissionMode = 'read-only';
    gateway = await fakeGateway((req) => (req.method === 'sessions.describe' ? { ok: true, payload: own.payload } : recordedReplies(req)));
    operator = operatorOf(gateway);
    const asks: PermissionAsk[] = [];
    const permissions = new TurnPermissions(operator, key, 'accept_edits', log);
    permissions.bind({ ask: async (ask) => (asks.push(ask), { decision: 'allow' }) });
    await permissions.begin();
    expect(gateway.requests.find((r) => r.method === 'sessions.patch').params).toEqual({ key, permissionMode: 'guarded' });
    // Another session's approval is not this turn's.
    gateway.push({ ...approval, payload: { ...approval.payload, id: 'someone-else', request: { ...approval.payload.request, sessionKey: 'agent:main:channel' } } });
    gateway.push(approval);
    await expect.poll(() => gateway!.requests.find((r) => r.method === 'exec.approval.resolve')?.params).toEqual({ id: approval.payload.id, decision: 'allow-once' });
    expect(asks).toEqual([{ tool: 'exec', title: 'Run `touch <home>/allowed.txt`', input: { command: 'touch <home>/allowed.txt', cwd: approval.payload.request.cwd }, options: ['allow', 'deny'], toolCallId: 'callfake1' }]);
    await permissions.end();
    expect(gateway.requests.filter((r) => r.method === 'sessions.patch').map((r) => r.params.permissionMode)).toEqual(['guarded', 'read-only']);
    expect(gateway.requests.filter((r) => r.method === 'exec.approval.resolve')).toHaveLength(1);
  });

  it('an approval that comes before the stream runs the turn waits for its answer; a deny is resolved as deny', async () => {
    gateway = await fakeGateway(recordedReplies);
    operator = operatorOf(gateway);
    const permissions = new TurnPermissions(operator, key, 'accept_edits', log);
    await permissions.begin();
    gateway.push(approval);
    await new Promise((r) => setTimeout(r, 100));
    expect(gateway.requests.some((r) => r.method === 'exec.approval.resolve')).toBe(false);
    permissions.bind({ ask: async () => ({ decision: 'deny' }) });
    await expect.poll(() => gateway!.requests.find((r) => r.method === 'exec.approval.resolve')?.params).toEqual({ id: approval.payload.id, decision: 'deny' });
    await permissions.end();
  });

  it('auto: nothing is opened; an approval of its session on a connection open for another turn is denied unasked', async () => {
    gateway = await fakeGateway(recordedReplies);
    operator = operatorOf(gateway);
    const auto = new TurnPermissions(operator, key, 'auto', log);
    const asked: PermissionAsk[] = [];
    auto.bind({ ask: async (ask) => (asked.push(ask), { decision: 'allow' }) });
    await auto.begin();
    expect(gateway.requests).toEqual([]);
    const other = new TurnPermissions(operator, 'agent:main:space-other', 'plan', log);
    await other.begin();
    expect(gateway.requests.find((r) => r.method === 'sessions.patch').params).toEqual({ key: 'agent:main:space-other', permissionMode: 'read-only' });
    gateway.push(approval);
    await expect.poll(() => gateway!.requests.find((r) => r.method === 'exec.approval.resolve')?.params).toEqual({ id: approval.payload.id, decision: 'deny' });
    expect(asked).toEqual([]);
    await auto.end();
    await other.end();
  });
});

/**
 * Records the operator WebSocket of the real, pinned OpenClaw gateway (on the pinned Node 24)
 * as the service speaks it, for test/fixtures/runtimea/2026.9.6/operator/frames.jsonl: the
 * handshake, `sessions.get` / `sessions.patch` around a turn, an exec approval asked and
 * allowed, one denied; and apart, in config-patch.jsonl, the chat endpoint turned on as the service
 * does it once the gateway is ready (`config.get`, then `config.patch` with its hash). The state folder comes from `openclaw onboard`; the turns are the
 * adapter's own HTTP requests to the loopback fake provider. Run inside the loopback-only
 * namespace:
 *
 *   unshare -n sh -c 'ip link set lo up && SPACE_TEST_NETNS=1 npx tsx test/tools/record-runtimea-operator.ts'
 *
 * One JSON line per frame: `{dir: "in" | "out", frame}` (`in` = from the gateway); the token is
 * written as `<token>`, temporary paths as `<home>`.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { startFakeChat } from '../fakes/openai-chat.js';
import { realProgram } from '../helpers/programs.js';
import { openclawOnboard } from '../helpers/setups.js';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'runtimea', '2026.9.6', 'operator');
const node = realProgram('node24');
const openclaw = realProgram('openclaw');
if (!node || !openclaw) throw new Error('run inside the test namespace (SPACE_TEST_NETNS=1)');

const fake = await startFakeChat();
const home = await mkdtemp(path.join(os.tmpdir(), 'rec-operator-'));
const stateDir = path.join(home, '.runtimea');
const token = 'recorder-operator-token-0123456789';
await openclawOnboard({ node, openclaw, home, stateDir, providerUrl: fake.url, apiKey: 'sk-recorder', auth: { mode: 'token', token } });
await writeFile(path.join(stateDir, '.env'), 'PROVB_API_KEY=sk-recorder\n');
const port = 18000 + Math.floor(Math.random() * 1000);
const gateway = spawn(node, [openclaw, 'gateway', 'run', '--port', String(port)], {
  env: { PATH: `${path.dirname(node)}:${process.env.PATH}`, HOME: home, OPENCLAW_STATE_DIR: stateDir, OPENCLAW_NO_RESPAWN: '1', OPENCLAW_DISABLE_BONJOUR: '1', OPENCLAW_EXEC_SHELL_SNAPSHOT: '0' },
  stdio: 'ignore',
  detached: true,
});
const url = `http://127.0.0.1:${port}`;
while ((await fetch(`${url}/readyz`).then((r) => r.status, () => 0)) !== 200) await new Promise((r) => setTimeout(r, 250));

const lines: string[] = [];
const keep = (dir: 'in' | 'out', frame: unknown) => lines.push(JSON.stringify({ dir, frame }).replaceAll(token, '<token>').replaceAll(home, '<home>'));
const ws = new WebSocket(url.replace('http', 'ws'));
const waiting = new Map<string, (frame: any) => void>();
const call = (method: string, params: unknown) =>
  new Promise<any>((resolve) => {
    const id = randomUUID();
    waiting.set(id, resolve);
    const frame = { type: 'req', id, method, params };
    keep('out', frame);
    ws.send(JSON.stringify(frame));
  });
let decide: 'allow-once' | 'deny' = 'allow-once';
const challenge = new Promise<void>((resolve) =>
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data));
    if (frame.type === 'event' && ['tick', 'health', 'presence', 'cron', 'update.available', 'chat', 'chat.metadata.changed', 'agent', 'sessions.changed'].includes(frame.event)) return;
    keep('in', frame);
    if (frame.type === 'res') waiting.get(frame.id)?.(frame);
    if (frame.event === 'connect.challenge') resolve();
    if (frame.event === 'exec.approval.requested') void call('exec.approval.resolve', { id: frame.payload.id, decision: decide });
  }),
);
await challenge;
await call('connect', {
  minProtocol: 4,
  maxProtocol: 4,
  client: { id: 'gateway-client', version: '1', platform: process.platform, mode: 'backend' },
  role: 'operator',
  scopes: ['operator.admin', 'operator.read', 'operator.write', 'operator.approvals'],
  caps: ['exec-approvals'],
  auth: { token, password: token },
});
// What the service does once its gateway is ready: the chat endpoint on, through the gateway.
const handshake = lines.length;
const current = await call('config.get', {});
await call('config.patch', { raw: JSON.stringify({ gateway: { http: { endpoints: { chatCompletions: { enabled: true } } } } }), baseHash: current.payload.hash });
const configFrames = lines.splice(handshake);
while ((await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}` } }).then((r) => r.status, () => 0)) === 404) await new Promise((r) => setTimeout(r, 100));

async function turn(header: string, text: string): Promise<void> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-openclaw-session-key': header },
    body: JSON.stringify({ model: 'openclaw/main', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: text }] }),
  });
  await res.text();
}

const header = `space-${randomUUID()}`;
const key = `agent:main:${header}`;
await call('sessions.describe', { key });
await call('sessions.patch', { key, permissionMode: 'guarded' });
await call('sessions.describe', { key });
await turn(header, `RUN_CMD<touch ${path.join(home, 'allowed.txt')}>`);
decide = 'deny';
await turn(header, `RUN_CMD<touch ${path.join(home, 'denied.txt')}>`);
await call('sessions.patch', { key, permissionMode: null });
ws.close();
await mkdir(OUT, { recursive: true });
await writeFile(path.join(OUT, 'frames.jsonl'), `${lines.join('\n')}\n`);
await writeFile(path.join(OUT, 'config-patch.jsonl'), `${configFrames.join('\n')}\n`);
process.kill(-gateway.pid!, 'SIGTERM');
await fake.close();
await rm(home, { recursive: true, force: true }).catch(() => undefined);
console.log(`${lines.length} frames -> ${path.relative(process.cwd(), OUT)}/frames.jsonl, ${configFrames.length} -> config-patch.jsonl`);

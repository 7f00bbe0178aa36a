/**
 * Records chat streams of the real, pinned OpenClaw gateway (on the pinned Node 24) against the
 * loopback fake provider, for the runtimea fixtures (test/fixtures/runtimea/2026.9.6/http/).
 * Run inside the loopback-only namespace:
 *
 *   unshare -n sh -c 'ip link set lo up && SPACE_TEST_NETNS=1 npx tsx test/tools/record-runtimea.ts'
 *
 * Files per request, as in the shared captures: `<name>.sse` (the body as received) and
 * `<name>.timed.txt` (each line prefixed with seconds since the request was sent).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeChat } from '../fakes/openai-chat.js';
import { openclawConfig } from '../fakes/openclaw-config.js';
import { realProgram } from '../helpers/programs.js';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'runtimea', '2026.9.6', 'http');
const node = realProgram('node24');
const openclaw = realProgram('openclaw');
if (!node || !openclaw) throw new Error('run inside the test namespace (SPACE_TEST_NETNS=1)');

const fake = await startFakeChat();
const home = await mkdtemp(path.join(os.tmpdir(), 'rec-runtimea-'));
const stateDir = path.join(home, '.runtimea');
await mkdir(stateDir, { recursive: true });
await writeFile(path.join(stateDir, 'openclaw.json'), JSON.stringify(openclawConfig(fake.url, stateDir), null, 2));
const port = 18000 + Math.floor(Math.random() * 1000);
const token = 'recorder-token';
const gateway = spawn(node, [openclaw, 'gateway', 'run', '--port', String(port), '--bind', 'loopback', '--auth', 'token', '--allow-unconfigured'], {
  env: { PATH: `${path.dirname(node)}:${process.env.PATH}`, HOME: home, OPENCLAW_STATE_DIR: stateDir, OPENCLAW_GATEWAY_TOKEN: token, OPENAI_API_KEY: 'sk-recorder', OPENCLAW_NO_RESPAWN: '1', OPENCLAW_DISABLE_BONJOUR: '1', OPENCLAW_EXEC_SHELL_SNAPSHOT: '0' },
  stdio: ['ignore', 'ignore', 'ignore'],
});
for (;;) {
  const status = await new Promise<number>((resolve) => request(`http://127.0.0.1:${port}/readyz`, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', () => resolve(0)).end());
  if (status === 200) break;
  await new Promise((r) => setTimeout(r, 250));
}

async function record(name: string, text: string, key: string): Promise<void> {
  const body = JSON.stringify({ model: 'openclaw/main', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: text }] });
  const t0 = Date.now();
  let raw = '';
  let timed = '';
  let partial = '';
  await new Promise<void>((resolve, reject) => {
    const req = request(`http://127.0.0.1:${port}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-openclaw-session-key': key } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        partial += chunk;
        const lines = partial.split('\n');
        partial = lines.pop()!;
        const at = ((Date.now() - t0) / 1000).toFixed(3).replace(/^0/, '');
        for (const line of lines) timed += `${at} ${line}\n`;
      });
      res.on('end', () => resolve());
    });
    req.on('error', reject);
    req.end(body);
  });
  await writeFile(path.join(OUT, `${name}.sse`), raw);
  await writeFile(path.join(OUT, `${name}.timed.txt`), timed);
  console.log(`recorded ${name}`);
}

await record('space-new-session', 'hello from the service', 'space-0b7a1f7e-5c55-4f1e-9d0a-3c1f5d2e8a41');
await record('space-resume', 'and again', 'space-0b7a1f7e-5c55-4f1e-9d0a-3c1f5d2e8a41');
await record('error-in-stream', 'please FAIL_500 now', 'space-6a3e2f1c-0000-4000-8000-000000000001');
gateway.kill('SIGTERM');
await new Promise((r) => gateway.once('exit', r));
await fake.close();

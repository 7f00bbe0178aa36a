/**
 * Prompts refused at the turn cap: what they cost the service. A real service process with a
 * cap of 1, held by one unopened prompt; then PROMPTS prompts of 150 KB each
 * (`BENCH_REFUSED_PROMPTS`, default 2,000), CONCURRENCY at a time (`BENCH_REFUSED_CONCURRENCY`,
 * default all at once), each on its own connection, in ROUNDS rounds (`BENCH_REFUSED_ROUNDS`,
 * default 3). Prints the answers' statuses and the service's RSS before, and per round at its
 * peak and 3 s after the last answer: bounded means later rounds add nothing.
 */
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CLAUDE_DOUBLE } from '../test/helpers/chat.js';
import { startChildService } from '../test/helpers/child-service.js';
import { MB, row, rssOf, sampleRss } from './lib.js';

const PROMPTS = Number(process.env.BENCH_REFUSED_PROMPTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_REFUSED_CONCURRENCY ?? PROMPTS);
const ROUNDS = Number(process.env.BENCH_REFUSED_ROUNDS ?? 3);
const BODY_KB = Number(process.env.BENCH_REFUSED_KB ?? 150);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const home = await mkdtemp(path.join(os.tmpdir(), 'space-bench-refused-'));
const service = await startChildService({
  home,
  env: { SPACE_CLIA_BIN: CLAUDE_DOUBLE, AGENT_NAME: 'clia_code', SPACE_CHAT_MAX_TURNS: '1', SPACE_CHAT_UNOPENED_TTL_MS: '600000' },
});
try {
  const held = await service.post('/api/chat/prompt', { text: 'hold the cap', agent_name: 'clia_code' });
  if (held.status !== 200) throw new Error(`the first prompt answered ${held.status}`);
  const body = Buffer.from(JSON.stringify({ text: 'x'.repeat(BODY_KB * 1024), agent_name: 'clia_code' }));
  await sleep(1000);
  const before = rssOf(service.pid);
  row('service RSS before', `${(before / MB).toFixed(0)} MB`);
  for (let round = 1; round <= ROUNDS; round++) {
    const peak = sampleRss(service.pid);
    const statuses = new Map<string, number>();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, PROMPTS) }, async () => {
        while (next < PROMPTS) {
          next++;
          const status = await post(service.port, body);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    const ms = performance.now() - started;
    const peakRss = peak.stop();
    await sleep(3000);
    const after = rssOf(service.pid);
    row(`round ${round}: ${PROMPTS} prompts of ${BODY_KB} KB, ${Math.min(CONCURRENCY, PROMPTS)} at a time`, `${Math.round(ms)} ms; answers ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}`);
    row(`round ${round}: service RSS peak, 3 s after`, `${(peakRss / MB).toFixed(0)} MB, ${(after / MB).toFixed(0)} MB`);
  }
} finally {
  await service.stop();
  await rm(home, { recursive: true, force: true });
}

/** One prompt on its own connection: the answer's status, or the client-side error code. */
function post(port: number, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/api/chat/prompt', agent: false, headers: { host: `127.0.0.1:${port}`, 'content-type': 'application/json', 'content-length': body.length } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
        res.on('error', () => resolve(String(res.statusCode)));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    req.end(body);
  });
}

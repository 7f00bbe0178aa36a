/**
 * The approval round trip over the CLI double's control channel (test/fakes/bin/claude.mjs
 * "perm <n>", the `can_use_tool` requests of fixture control-protocol/60), in a real service
 * process, `permission_mode: "ask"`:
 * - request: the double writing a `can_use_tool` line on its stdout (the time is in the
 *   request's input) -> the client reading the `permission-request` frame;
 * - decision: the client sending POST /api/chat/respond -> the double reading the
 *   `control_response` on its stdin (it logs the time to FAKE_CLAUDE_PERM_LOG).
 * Goal (issue 23): p95 under 5 ms each. A baseline row gives the same route's round trip when
 * it names no request (the spec's no-op): the HTTP floor under the machine's load at the time.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CLAUDE_DOUBLE } from '../test/helpers/chat.js';
import { startChildService } from '../test/helpers/child-service.js';
import { openSse } from '../test/helpers/sse.js';
import { percentile, row } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ASKS = 200;
const GOAL_MS = 5;
const now = (): number => performance.timeOrigin + performance.now();

const home = await mkdtemp(path.join(os.tmpdir(), 'space-bench-approvals-'));
const permLog = path.join(home, 'perm.log');
const service = await startChildService({
  home,
  env: { SPACE_CLIA_BIN: CLAUDE_DOUBLE, AGENT_NAME: 'clia_code', FAKE_CLAUDE_STARTUP_MS: '0', FAKE_CLAUDE_PERM_LOG: permLog },
});
try {
  await turn(20); // warm-up: module loading and JIT are not what is measured
  const requests: number[] = [];
  const decisions: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = await turn(ASKS);
    requests.push(...t.requests);
    decisions.push(...t.decisions);
  }
  const line = (values: number[]): string => `p50 ${percentile(values, 50).toFixed(2)} ms, p95 ${percentile(values, 95).toFixed(2)} ms, p99 ${percentile(values, 99).toFixed(2)} ms (n=${values.length})`;
  row('program request -> permission-request read', line(requests));
  row('POST /api/chat/respond -> decision read', line(decisions));
  // The floor under the same load: the same route's whole round trip when it names no request.
  const floor: number[] = [];
  for (let i = 0; i < ROUNDS * ASKS; i++) {
    const started = now();
    await service.post('/api/chat/respond', {});
    floor.push(now() - started);
  }
  row('baseline: POST /api/chat/respond {} round trip', line(floor));
  const worst = Math.max(percentile(requests, 95), percentile(decisions, 95));
  row(`goal: p95 < ${GOAL_MS} ms`, worst < GOAL_MS ? 'met' : `MISSED (${worst.toFixed(2)} ms)`);
  if (worst >= GOAL_MS) process.exitCode = 1;
} finally {
  await service.stop();
  await rm(home, { recursive: true, force: true });
}

/** One turn asking `n` times, each answered at once: both latencies per request. */
async function turn(n: number): Promise<{ requests: number[]; decisions: number[] }> {
  const { stream_id } = (await service.post('/api/chat/prompt', { text: `perm ${n}`, permission_mode: 'ask' })).json();
  const sse = await openSse(service.port, `/api/chat/stream/${stream_id}`);
  const requests: number[] = [];
  const sent = new Map<string, number>();
  const answers: Array<Promise<unknown>> = [];
  sse.onEvent((e) => {
    if (e.event !== 'permission-request') return;
    const read = now();
    requests.push(read - Number(e.data.input.content));
    sent.set(e.data.input.content, now());
    answers.push(service.post('/api/chat/respond', { request_id: e.data.request_id, decision: 'allow' }));
  });
  await sse.ended;
  await Promise.all(answers);
  const done = sse.events.at(-1);
  if (done?.event !== 'done') throw new Error(`turn did not end with done: ${JSON.stringify(done)}`);
  const decisions = readFileSync(permLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { content: string; received_at: number })
    .filter((a) => sent.has(a.content))
    .map((a) => a.received_at - sent.get(a.content)!);
  if (requests.length !== n || decisions.length !== n) throw new Error(`expected ${n} requests and decisions, got ${requests.length} and ${decisions.length}`);
  return { requests, decisions };
}

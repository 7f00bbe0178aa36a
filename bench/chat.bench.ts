/**
 * The chat engine over the CLI double (test/fakes/bin/claude.mjs), in a real service process:
 * - time to first delta: POST /api/chat/prompt -> first `text-delta` read by the client,
 *   against the double alone (spawn -> its first delta line); no simulated start-up delay;
 * - SSE overhead per delta: latency from the double writing a delta to the client reading it
 *   (deltas 5 ms apart, each carrying its write time), and the added cost per delta of 5,000
 *   unpaced deltas, service vs the double alone;
 * - 1,000 concurrent idle streams held with heartbeats: the service's memory per stream.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CLAUDE_DOUBLE } from '../test/helpers/chat.js';
import { startChildService, type ChildService } from '../test/helpers/child-service.js';
import { openSse, type SseConnection } from '../test/helpers/sse.js';
import { MB, median, percentile, row, rssOf } from './lib.js';

const ROUNDS = 9;
const UNPACED = 5000;
const STREAMS = 1000;
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const home = await mkdtemp(path.join(os.tmpdir(), 'space-bench-chat-'));
const service = await startChildService({
  home,
  env: { SPACE_CLIA_BIN: CLAUDE_DOUBLE, AGENT_NAME: 'clia_code', FAKE_CLAUDE_STARTUP_MS: '0', SPACE_CHAT_MAX_TURNS: '32', SPACE_CHAT_HEARTBEAT_CLI_MS: '1000' },
});
try {
  await throughService('bench 10'); // warm-up: module loading and JIT are not what is measured

  const direct: number[] = [];
  const served: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    direct.push((await directly('bench 10')).firstMs);
    served.push((await throughService('bench 10')).firstMs);
  }
  row(`time to first delta, double alone (median of ${ROUNDS})`, `${median(direct).toFixed(1)} ms`);
  row(`time to first delta, through the service`, `${median(served).toFixed(1)} ms (+${(median(served) - median(direct)).toFixed(1)} ms)`);

  const latencies: number[] = [];
  for (let i = 0; i < ROUNDS; i++) latencies.push(...(await throughService('bench 200 gap 5')).latencies);
  row('delta latency, double write -> client read', `p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms`);

  const alone: number[] = [];
  const through: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    alone.push((await directly(`bench ${UNPACED}`)).spanMs);
    through.push((await throughService(`bench ${UNPACED}`)).spanMs);
  }
  const extra = ((median(through) - median(alone)) / UNPACED) * 1000;
  row(`${UNPACED} unpaced deltas, double alone (median)`, `${median(alone).toFixed(0)} ms`);
  row(`${UNPACED} unpaced deltas, through the service (median)`, `${median(through).toFixed(0)} ms (+${extra.toFixed(1)} µs per delta)`);

  await idleStreams(STREAMS);
} finally {
  await service.stop();
  await rm(home, { recursive: true, force: true });
}

interface Timing {
  firstMs: number;
  spanMs: number;
  latencies: number[];
}

/** The double on its own: spawn -> first delta line; first -> last delta line. */
async function directly(prompt: string): Promise<Timing> {
  const started = now();
  const child = spawn(CLAUDE_DOUBLE, ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--', prompt], {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home, FAKE_CLAUDE_STARTUP_MS: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let first = 0;
  let last = 0;
  for await (const line of createInterface({ input: child.stdout! })) {
    if (!line.includes('"text_delta"')) continue;
    last = now();
    first ||= last;
  }
  return { firstMs: first - started, spanMs: last - first, latencies: [] };
}

/** One turn through the service: prompt -> first delta read; first -> last; write -> read latencies. */
async function throughService(prompt: string): Promise<Timing> {
  const started = now();
  const { stream_id } = (await service.post('/api/chat/prompt', { text: prompt })).json();
  const sse = await openSse(service.port, `/api/chat/stream/${stream_id}`);
  let first = 0;
  let last = 0;
  const latencies: number[] = [];
  sse.onEvent((e) => {
    if (e.event !== 'text-delta') return;
    last = now();
    first ||= last;
    latencies.push(last - Number(String(e.data.text).slice(0, -1)));
  });
  await sse.ended;
  const done = sse.events.at(-1);
  if (done?.event !== 'done') throw new Error(`turn did not end with done: ${JSON.stringify(done)}`);
  return { firstMs: first - started, spanMs: last - first, latencies };
}

/** `n` streams held open on silent turns with heartbeats flowing; the service's RSS growth. */
async function idleStreams(n: number): Promise<void> {
  const turns = 10;
  const ids: string[] = [];
  const streams: SseConnection[] = [];
  for (let i = 0; i < turns; i++) {
    const { stream_id } = (await service.post('/api/chat/prompt', { text: 'silent 120000 then hello' })).json();
    ids.push(stream_id);
    streams.push(await openSse(service.port, `/api/chat/stream/${stream_id}`));
  }
  await Promise.all(streams.map((s) => s.waitFor((e) => e.event === 'session-created')));
  await sleep(1500);
  const before = rssOf(service.pid);
  // The others follow the same turns live (Last-Event-ID after session-created).
  for (let i = turns; i < n; i++) streams.push(await openSse(service.port, `/api/chat/stream/${ids[i % turns]}`, { 'Last-Event-ID': '1' }));
  await sleep(3500); // three heartbeat intervals
  const after = rssOf(service.pid);
  const beating = streams.filter((s) => s.events.some((e) => e.event === 'heartbeat')).length;
  row(`${n} idle streams on ${turns} silent turns`, `${beating}/${n} got heartbeats`);
  row(`service RSS growth for ${n - turns} more streams`, `${((after - before) / MB).toFixed(1)} MB, ${((after - before) / (n - turns) / 1024).toFixed(1)} KB per stream`);
  for (const id of ids) await service.post('/api/chat/abort', { stream_id: id });
  await Promise.all(streams.map((s) => s.ended));
}

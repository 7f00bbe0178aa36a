/**
 * The event channel (GET /api/events) in a real service process, clia turns on the CLI double:
 * - a log append (another process writing a session's transcript) -> the `session-updated`
 *   frame read by a client: p50/p95 over ROUNDS appends (watcher debounce included);
 * - a turn's `done` read on its chat stream -> `turn-ended` read on /api/events: the gap
 *   (negative when turn-ended came first; it is published as the done frame is made);
 * - 200 idle subscribers: the service's RSS growth, and one append reaching all of them.
 */
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CliSessionStore } from '../service/runtimes/cli-session-store.js';
import { CLAUDE_DOUBLE } from '../test/helpers/chat.js';
import { startChildService } from '../test/helpers/child-service.js';
import { openSse, type SseConnection } from '../test/helpers/sse.js';
import { cliaTranscript } from '../test/sessions/fixtures.js';
import { MB, median, percentile, row, rssOf } from './lib.js';

const ROUNDS = Number(process.env.BENCH_EVENTS_ROUNDS ?? 40);
const SUBSCRIBERS = 200;
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const home = await mkdtemp(path.join(os.tmpdir(), 'space-bench-events-'));
const store = new CliSessionStore(path.join(home, 'clia-space'), 'clia_code');
await store.upsert('bench', 'bench-log', { title: 'Appended to', updatedAt: Date.now() });
await store.append('bench', 'bench-log', cliaTranscript('bench-log', [{ prompt: 'Say hello', run: '01-new-text', at: new Date() }]));
const file = store.transcriptFile('bench', 'bench-log');
const turnLines = cliaTranscript('bench-log', [{ prompt: 'run echo hi', run: '03-resume-tool-bash', at: new Date() }]).join('\n') + '\n';

const service = await startChildService({
  home,
  env: { SPACE_CLIA_BIN: CLAUDE_DOUBLE, AGENT_NAME: 'clia_code', FAKE_CLAUDE_STARTUP_MS: '0' },
});
try {
  await waitListed('bench-log');
  // First, while the service is quiet (the turns below leave garbage that makes RSS noisy).
  await subscribers(SUBSCRIBERS);
  const events = await openSse(service.port, '/api/events');

  const appendMs: number[] = [];
  for (let i = 0; i < ROUNDS + 2; i++) {
    const ms = await appendToUpdated(events);
    if (i >= 2) appendMs.push(ms); // warm-up
    await sleep(50);
  }
  row(`log append -> session-updated read (${ROUNDS} appends)`, `p50 ${percentile(appendMs, 50).toFixed(1)} ms, p95 ${percentile(appendMs, 95).toFixed(1)} ms, max ${Math.max(...appendMs).toFixed(1)} ms`);

  const gaps: number[] = [];
  for (let i = 0; i < ROUNDS + 2; i++) {
    const gap = await doneToTurnEnded(events);
    if (i >= 2) gaps.push(gap);
  }
  row(`done read -> turn-ended read (${ROUNDS} turns)`, `p50 ${percentile(gaps, 50).toFixed(2)} ms, p95 ${percentile(gaps, 95).toFixed(2)} ms (negative: turn-ended first)`);
  events.close();
} finally {
  await service.stop();
  await rm(home, { recursive: true, force: true });
}

async function waitListed(id: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await service.request('GET', `/api/sessions/${id}`)).status === 200) return;
    await sleep(50);
  }
  throw new Error(`${id} never listed`);
}

/** Appends one turn to the log; ms until the session-updated with the new count is read. */
async function appendToUpdated(events: SseConnection): Promise<number> {
  const from = events.events.length;
  const started = now();
  await appendFile(file, turnLines);
  const arrived = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no session-updated within 5 s')), 5000);
    const check = (): void => {
      if (events.events.slice(from).some((e) => e.event === 'session-updated' && e.data.session_id === 'bench-log')) {
        clearTimeout(timer);
        resolve(now());
      } else setTimeout(check, 1);
    };
    check();
  });
  return arrived - started;
}

/** One short turn; its done (chat stream) and turn-ended (events) arrival times, subtracted. */
async function doneToTurnEnded(events: SseConnection): Promise<number> {
  const { stream_id } = (await service.post('/api/chat/prompt', { text: 'bench 10' })).json();
  let endedAt = 0;
  events.onEvent((e) => {
    if (e.event === 'turn-ended' && e.data.stream_id === stream_id) endedAt = now();
  });
  const chat = await openSse(service.port, `/api/chat/stream/${stream_id}`);
  let doneAt = 0;
  chat.onEvent((e) => {
    if (e.event === 'done') doneAt = now();
  });
  await chat.ended;
  while (!endedAt) await sleep(1);
  if (!doneAt) throw new Error('the turn did not end with done');
  return endedAt - doneAt;
}

/** `n` idle subscribers: RSS growth, heartbeats aside; one append's fan-out to all of them. */
async function subscribers(n: number): Promise<void> {
  await sleep(1000);
  const before = rssOf(service.pid);
  const streams: SseConnection[] = [];
  for (let i = 0; i < n; i++) streams.push(await openSse(service.port, '/api/events'));
  await sleep(1500);
  const after = rssOf(service.pid);
  row(`${n} idle subscribers: service RSS growth`, `${((after - before) / MB).toFixed(1)} MB, ${((after - before) / n / 1024).toFixed(1)} KB per subscriber`);
  const fanOut: number[] = [];
  for (let round = 0; round < 5; round++) {
    const marks = streams.map((s) => s.events.length);
    const started = now();
    await appendFile(file, turnLines);
    const arrivals = await Promise.all(
      streams.map(
        (s, i) =>
          new Promise<number>((resolve) => {
            const check = (): void => {
              if (s.events.slice(marks[i]).some((e) => e.event === 'session-updated')) resolve(now());
              else setTimeout(check, 2);
            };
            check();
          }),
      ),
    );
    fanOut.push(Math.max(...arrivals) - started);
    await sleep(100);
  }
  row(`one append -> read by all ${n} subscribers`, `median ${median(fanOut).toFixed(1)} ms, max ${Math.max(...fanOut).toFixed(1)} ms (5 appends)`);
  for (const s of streams) s.close();
}

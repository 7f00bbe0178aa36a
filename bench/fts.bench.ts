/**
 * Full-text search on a real service process, over a generated corpus in the real formats
 * (bench/corpus.ts): sessions of runtimea, clia and clib, plus one long log of a fifth of
 * the size. FTS_BENCH_MB sets the corpus size (default 1024); it is written under the temp
 * folder and removed afterwards.
 * - first full build: spawn to `ready`, log MB/s, the worker's own pass time, peak RSS;
 * - GET / latency while the first build runs (goal: p95 < 50 ms);
 * - a message appended during the build and after it: time until searchable (goal < 2 s);
 * - index size on disk;
 * - 100 queries (words, AND, phrases, prefixes of 2-6 letters, filters, misses), warm p95 (goal < 100 ms);
 * - a restart: time to `ready` with nothing to read again.
 */
import { spawnSync } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAX_CANDIDATES } from '../service/fts/search.js';
import { startChildService, type ChildService } from '../test/helpers/child-service.js';
import { random, runtimeaLines, sentence, writeBigLog, writeCorpus } from './corpus.js';
import { MB, median, ok, percentile, probeLatency, row, sampleRss, timed } from './lib.js';

const TOTAL_MB = Number(process.env.FTS_BENCH_MB ?? 1024);
/** Bytes per generated session with up to 20 turns (measured: ~18 KB). */
const SESSION_BYTES = 18_000;

async function duSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

const figures = (times: number[]) => `${median(times).toFixed(1)} ms median / ${percentile(times, 95).toFixed(1)} ms p95 / ${Math.max(...times).toFixed(1)} ms max (n=${times.length})`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Appends a runtimea turn with a word of its own; resolves with the ms until a search finds it. */
async function appendToSearchable(service: ChildService, file: string, word: string): Promise<number> {
  const rand = random(word.length);
  const lines = runtimeaLines('appended-0000', [{ prompt: `please find the ${word} now`, reply: sentence(rand, 20) }], Date.now(), rand).slice(2);
  const started = process.hrtime.bigint();
  await appendFile(file, `${lines.join('\n')}\n`);
  for (;;) {
    if ((await ok(service, `/api/fts/search?q=${word}`)).total > 0) return Number(process.hrtime.bigint() - started) / 1e6;
    if (Number(process.hrtime.bigint() - started) / 1e6 > 30_000) throw new Error(`${word} never became searchable`);
    await sleep(5);
  }
}

function queries(): string[] {
  const words = 'parser session index token model tool file project write read test build deploy fix bug cache merge search title agent runtime shell output error config plan week report user data'.split(' ');
  const rand = random(11);
  const pick = () => words[Math.floor(rand() * words.length)]!;
  const out: string[] = [];
  for (let i = 0; i < 30; i++) out.push(pick());
  for (let i = 0; i < 20; i++) out.push(`${pick()} ${pick()}`);
  for (let i = 0; i < 20; i++) out.push(`"${pick()} ${pick()}"`);
  for (let i = 0; i < 15; i++) out.push(`${pick().slice(0, 2 + (i % 5))}*`);
  for (let i = 0; i < 5; i++) out.push(`${pick()}&ws=project-0`);
  for (let i = 0; i < 5; i++) out.push(`${pick()} ${pick()}&agent_name=clib`);
  for (let i = 0; i < 5; i++) out.push(`zqx${i}nothing`);
  return out;
}

// The service as `npm start` runs it (built): the indexing worker starts from JavaScript.
const build = spawnSync(process.execPath, [path.join('build', 'ensure-built.mjs')], { stdio: 'inherit' });
if (build.status !== 0) throw new Error('the build failed');
const ENTRY = 'dist/service/cli.js';

const home = await mkdtemp(path.join(os.tmpdir(), 'space-bench-fts-'));
try {
  // The corpus: sessions for four fifths, one long log for the rest.
  const sessions = Math.max(30, Math.round((TOTAL_MB * MB * 0.8) / SESSION_BYTES));
  const [genMs] = await timed(async () => {
    await writeCorpus(home, { sessions, maxTurns: 20, perAgent: 500 });
    const dir = path.join(home, '.runtimea', 'agents', 'long', 'sessions');
    await mkdir(dir, { recursive: true });
    await writeBigLog(path.join(dir, 'b16b16b1-0000-4000-a000-000000000000.jsonl'), 'runtimea', Math.round(TOTAL_MB * MB * 0.2));
    await writeFile(path.join(dir, 'sessions.json'), JSON.stringify({ 'agent:long:main': { sessionId: 'b16b16b1-0000-4000-a000-000000000000', updatedAt: Date.now() } }));
    await mkdir(path.join(home, 'space-projects', 'project-0'), { recursive: true });
  });
  const corpusBytes = await duSize(home);
  row('corpus', `${(corpusBytes / MB).toFixed(0)} MB: ${sessions.toLocaleString('en')} sessions + one ${(TOTAL_MB * 0.2).toFixed(0)} MB log, written in ${(genMs / 1000).toFixed(1)} s`);
  const appendFileTarget = path.join(home, '.runtimea', 'agents', 'agent-0', 'sessions', `${(await readdir(path.join(home, '.runtimea', 'agents', 'agent-0', 'sessions'))).find((n) => n.endsWith('.jsonl'))}`);

  // First build, with GET / measured throughout and one append made in the middle of it.
  const spawned = process.hrtime.bigint();
  const service = await startChildService({ home, env: { SPACE_LOG_LEVEL: 'info' }, entry: ENTRY });
  const rss = sampleRss(service.pid, 100);
  const probe = probeLatency(service.port);
  let duringBuild: Promise<number> | undefined;
  let status: any;
  for (;;) {
    status = await ok(service, '/api/fts/index/all');
    if (!duringBuild && status.status === 'indexing' && status.progress > 0.3) duringBuild = appendToSearchable(service, appendFileTarget, 'duringbuildword');
    if (status.status === 'ready' && duringBuild) break;
    await sleep(250);
  }
  const buildMs = Number(process.hrtime.bigint() - spawned) / 1e6;
  const latencies = await probe.stop();
  const peak = rss.stop();
  const pass = /"jobs":(\d+),"sessions":\d+,"read":(\d+),"documents":(\d+),"ms":(\d+),"msg":"fts index up to date"/.exec(service.output());
  row('first full build: spawn to ready', `${(buildMs / 1000).toFixed(1)} s, ${(corpusBytes / MB / (buildMs / 1000)).toFixed(1)} MB/s of log`);
  if (pass) row('  worker pass', `${(Number(pass[4]) / 1000).toFixed(1)} s, ${Number(pass[3]).toLocaleString('en')} documents from ${Number(pass[1]).toLocaleString('en')} sessions`);
  row('  index', `${status.documents.toLocaleString('en')} documents, ${status.messages.toLocaleString('en')} messages, ${(status.bytes / MB).toFixed(0)} MB of text`);
  row('  service peak RSS', `${(peak / MB).toFixed(0)} MB`);
  row('GET / during the first build', figures(latencies));
  row('append during the build -> searchable', `${(await duringBuild!).toFixed(0)} ms`);

  try {
    const after: number[] = [];
    for (let i = 0; i < 5; i++) after.push(await appendToSearchable(service, appendFileTarget, `afterbuildword${i}`));
    row('append after the build -> searchable (5)', figures(after));

    const list = queries();
    for (const q of list) await ok(service, `/api/fts/search?q=${q.includes('&') ? q.replace(/^([^&]*)/, (m) => encodeURIComponent(m)) : encodeURIComponent(q)}`);
    const times: number[] = [];
    const byKind = new Map<string, number[]>();
    let capped = 0;
    for (const [i, q] of list.entries()) {
      const target = `/api/fts/search?q=${q.includes('&') ? q.replace(/^([^&]*)/, (m) => encodeURIComponent(m)) : encodeURIComponent(q)}`;
      const [ms, body] = await timed(() => ok(service, target));
      times.push(ms);
      if (body.capped) capped++;
      const kind = i < 30 ? 'word' : i < 50 ? 'two words' : i < 70 ? 'phrase' : i < 85 ? 'prefix' : i < 95 ? 'filtered' : 'no match';
      byKind.set(kind, [...(byKind.get(kind) ?? []), ms]);
    }
    row('100 queries, warm', `${figures(times)}; ${capped} capped at ${MAX_CANDIDATES.toLocaleString('en')} candidates`);
    for (const [kind, ms] of byKind) row(`  ${kind}`, figures(ms));
  } finally {
    await service.stop();
  }
  const indexDir = path.join(home, '.space-state', 'fts');
  const indexBytes = await duSize(indexDir);
  row('index size on disk', `${(indexBytes / MB).toFixed(0)} MB (${((indexBytes / corpusBytes) * 100).toFixed(0)}% of the logs)`);

  const again = process.hrtime.bigint();
  const restarted = await startChildService({ home, env: { SPACE_LOG_LEVEL: 'info' }, entry: ENTRY });
  try {
    for (;;) {
      const s = await ok(restarted, '/api/fts/index/all');
      if (s.status === 'ready') break;
      await sleep(100);
    }
    const resumed = /"read":(\d+),"documents":(\d+),"ms":(\d+),"msg":"fts index up to date"/.exec(restarted.output());
    row('restart: spawn to ready', `${(Number(process.hrtime.bigint() - again) / 1e6 / 1000).toFixed(1)} s; read again: ${resumed?.[1] ?? '?'} bytes, ${resumed?.[2] ?? '?'} documents`);
  } finally {
    await restarted.stop();
  }
} finally {
  await rm(home, { recursive: true, force: true });
}


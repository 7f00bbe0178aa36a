/**
 * The user's terminal history (docs/history.md) on a real service process started as
 * `npm start` starts it, over a generated history shaped as the programs write it
 * (bench/history-home.ts: half Claude Code sessions with sub-agents, half Codex rollouts, 10 %
 * of them `.jsonl.zst`, sizes spread as a user's are, plus one big rollout), written once into
 * a cache folder (HISTORY_BENCH_CACHE, default /tmp/space-bench-history) and reused. Each run
 * gets a fresh HOME (the service's state) whose CLAUDE_CONFIG_DIR and CODEX_HOME point at it.
 * Figures, each beside the load average:
 * - first start: spawn to the complete first page (every session counted in `total`, the page
 *   titled) and peak RSS to then and over the first minute (the whole list read once in it);
 *   the kept copies' first pass; every title known;
 * - a terminal append (a new prompt in the newest Claude Code session) to the list showing it;
 * - restart: spawn to the complete first page; then the newest messages page of the big rollout;
 * - usage's first pass (the aggregates dropped, /api/usage over the whole range) in MB/s of
 *   history, and over the Codex rollouts alone, beside ccusage (`claude daily` and `codex daily`,
 *   --json --offline, each over its program's files) and a bare `JSON.parse` loop over every
 *   plain file, in the same run.
 * HISTORY_BENCH_LOG=1 prints the service's timed log lines of the first start.
 * HISTORY_BENCH_FIRST_ONLY=1 stops after the first start and the append.
 * HISTORY_BENCH_PROF=<dir>: each service process writes a CPU profile of its main thread there.
 * Scale: HISTORY_BENCH_SESSIONS (default 2,000), HISTORY_BENCH_MB (default 200) and
 * HISTORY_BENCH_BIG_MB (default 100). The issue's size, the documented way to run it:
 *   HISTORY_BENCH_SESSIONS=20000 HISTORY_BENCH_MB=5120 HISTORY_BENCH_BIG_MB=2048 \
 *     flock /tmp/space-heavy.lock npm run bench -- history
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync, truncateSync, utimesSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startChildService, type ChildService } from '../test/helpers/child-service.js';
import { programPath } from '../test/tools/programs.mjs';
import { historyHome, type HistoryHome } from './history-home.js';
import { MB, ok, row, sampleRss, timed } from './lib.js';

const SESSIONS = Number(process.env.HISTORY_BENCH_SESSIONS ?? 2000);
const BYTES = Number(process.env.HISTORY_BENCH_MB ?? 200) * MB;
const BIG = Number(process.env.HISTORY_BENCH_BIG_MB ?? 100) * MB;
const CACHE = process.env.HISTORY_BENCH_CACHE ?? '/tmp/space-bench-history';
/** The service's entry: `npm start`'s, or the same with a CPU profile (bench/prof-entry.mjs). */
const START = process.env.HISTORY_BENCH_PROF ? 'bench/prof-entry.mjs' : 'build/start.mjs';
const load = (): string => `load ${os.loadavg()[0]!.toFixed(1)}`;
const mbps = (bytes: number, ms: number): string => `${(bytes / MB / (ms / 1000)).toFixed(0)} MB/s`;

function files(dir: string, ends: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(ends))
    .map((f) => path.join(dir, f));
}

/** The service's env; HISTORY_BENCH_PROF=<dir> has each service process write a CPU profile there. */
function serviceEnv(made: HistoryHome, level = 'info'): Record<string, string> {
  const prof = process.env.HISTORY_BENCH_PROF;
  return { SPACE_LOG_LEVEL: level, CLAUDE_CONFIG_DIR: made.claudeDir, CODEX_HOME: made.codexHome, ...(prof ? { SPACE_BENCH_PROF_DIR: prof } : {}) };
}

/** Spawn to the first complete first page: every session in `total`, each on the page titled. */
async function firstPage(home: string, made: HistoryHome): Promise<{ service: ChildService; ms: number; rss: { stop(): number }; missing: string }> {
  const started = process.hrtime.bigint();
  const service = await startChildService({ home, env: serviceEnv(made), entry: START });
  const rss = sampleRss(service.pid);
  const elapsed = (): number => Number(process.hrtime.bigint() - started) / 1e6;
  let missing = '';
  for (;;) {
    const body = await ok(service, '/api/sessions?origin=terminal');
    const untitled = body.sessions.filter((s: any) => !s.title).length;
    if (body.total === made.total && untitled === 0) break;
    // Reported rather than waited for without end.
    if (elapsed() > 120_000) {
      missing = ` NOT COMPLETE after 120 s: total ${body.total} of ${made.total}, ${untitled} of the page untitled`;
      break;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return { service, ms: elapsed(), rss, missing };
}

/** Sessions listed without a title, over every page. */
async function untitledCount(service: ChildService): Promise<number> {
  let n = 0;
  for (let offset = 0; ; offset += 1000) {
    const body = await ok(service, `/api/sessions?origin=terminal&limit=1000&offset=${offset}`);
    n += body.sessions.filter((s: any) => !s.title).length;
    if (offset + 1000 >= body.total) return n;
  }
}

/** The baseline: every line of every plain file through JSON.parse, one thread, 8 MB reads. */
function bareParse(list: string[]): number {
  const buf = Buffer.allocUnsafe(8 * MB);
  let lines = 0;
  for (const file of list) {
    const fd = openSync(file, 'r');
    let held = 0;
    for (let pos = 0; ; ) {
      const read = readSync(fd, buf, held, buf.length - held, pos);
      if (read <= 0) break;
      pos += read;
      const end = held + read;
      let at = 0;
      for (let nl = buf.indexOf(10, at); nl !== -1 && nl < end; nl = buf.indexOf(10, at)) {
        JSON.parse(buf.toString('utf8', at, nl));
        lines++;
        at = nl + 1;
      }
      buf.copy(buf, 0, at, end);
      held = end - at;
    }
    closeSync(fd);
  }
  return lines;
}

/** ccusage's `<program> daily --json --offline` over `env`'s history, without network. */
function ccusage(program: 'claude' | 'codex', env: Record<string, string>): number | undefined {
  const bin = programPath('ccusage') as string | undefined;
  if (!bin) return undefined;
  const args = [program, 'daily', '--json', '--offline', '--timezone', 'UTC'];
  const netns = spawnSync('unshare', ['-n', 'true']).status === 0;
  const started = process.hrtime.bigint();
  const run = netns ? spawnSync('unshare', ['-n', bin, ...args], { env: { ...process.env, ...env }, maxBuffer: 256 * MB }) : spawnSync(bin, args, { env: { ...process.env, ...env }, maxBuffer: 256 * MB });
  if (run.status !== 0) throw new Error(`ccusage ${program} failed: ${run.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

async function firstStart(home: string, made: HistoryHome): Promise<ChildService> {
  const first = await firstPage(home, made);
  const service = first.service;
  // The service's own timings of its start (HISTORY_BENCH_LOG=1).
  if (process.env.HISTORY_BENCH_LOG) for (const line of service.output().split('\n').filter((l) => /"ms":/.test(l))) console.log(`    ${line.slice(0, 300)}`);
  row('first start: complete first page', `${first.ms.toFixed(0)} ms (goal < 3 s)${first.missing}, peak RSS ${(first.rss.stop() / MB).toFixed(0)} MB to then (${load()})`);
  // What the first start goes on doing (kept copies, usage, message counts, full-text index).
  const later = sampleRss(service.pid, 50);
  const keptDir = path.join(home, '.space-state', 'history');
  const keptStarted = Date.now();
  let kept = 0;
  let grewAt = keptStarted;
  // Every title known: the listing's search answers once the titles pass ended. (Until 2026-12-07
  // the bench listed the whole list in pages of 1,000 every 2 s to see it: load no app makes,
  // about 50 MB of the peak below in the garbage of those answers; the list is read once below.)
  let titledAt = 0;
  void ok(service, '/api/sessions/search?q=no-title-holds-this').then(() => (titledAt = Date.now()));
  // Watched until the copies stop growing for 10 s and every session has its title (60 s at most).
  while (Date.now() - keptStarted < 60_000 && (kept === 0 || Date.now() - grewAt < 10_000 || titledAt === 0)) {
    const now = ['clia', 'clib'].flatMap((d) => files(path.join(keptDir, d), '.jsonl').map((f) => statSync(f).size)).reduce((a, b) => a + b, 0);
    if (now > kept) [kept, grewAt] = [now, Date.now()];
    await new Promise((r) => setTimeout(r, 2000));
  }
  // The whole list read once (a user scrolling to its end), inside the peak's window: each page
  // counts its sessions (compressed rollouts read in place among them).
  const untitled = await untitledCount(service);
  row('kept copies, first pass', `${(kept / MB).toFixed(0)} MB, the last written ${((grewAt - keptStarted) / 1000).toFixed(1)} s after the first page (${load()})`);
  const whole = `${untitled} untitled in the whole list read after`;
  row('every session titled', titledAt > 0 ? `${((titledAt - keptStarted) / 1000).toFixed(1)} s after the first page; ${whole} (${load()})` : `not 60 s after the first page; ${whole} (${load()})`);
  row('first start: peak RSS while copies are made', `${(later.stop() / MB).toFixed(0)} MB (goal < 300 MB) (${load()})`);
  return service;
}

/** A new prompt appended to the newest Claude Code session, to the list showing it; the file is put back after. */
async function terminalAppend(service: ChildService, made: HistoryHome): Promise<void> {
  const file = made.newestClaude.file;
  const { size, atime, mtime } = statSync(file);
  const line = (await readFile(file, 'utf8')).split('\n').find((l) => l.includes('"type":"user"') && l.includes('"content":"'))!;
  const record = JSON.parse(line);
  record.message.content = 'one more prompt from the terminal';
  record.timestamp = new Date().toISOString();
  const before = (await ok(service, `/api/sessions/${made.newestClaude.id}`)).updated_at;
  try {
    let seen = true;
    const [ms] = await timed(async () => {
      await appendFile(file, `${JSON.stringify(record)}\n`);
      // Shown: the session on the list's first page with its new time (reported rather than waited for without end).
      for (const started = Date.now(); ; ) {
        const page = (await ok(service, '/api/sessions?origin=terminal&limit=10')).sessions;
        if (page.some((s: any) => s.session_id === made.newestClaude.id && s.updated_at > before)) break;
        if (Date.now() - started > 60_000) return void (seen = false);
        await new Promise((r) => setTimeout(r, 5));
      }
    });
    if (!seen) row('terminal append to the list', `NOT SHOWN within 60 s (${load()})`);
    else row('terminal append to the list', `${ms.toFixed(0)} ms (goal < 1 s) (${load()})`);
  } finally {
    truncateSync(file, size);
    utimesSync(file, atime, mtime);
  }
}

async function restart(home: string, made: HistoryHome): Promise<void> {
  const again = await firstPage(home, made);
  row('restart: complete first page', `${again.ms.toFixed(0)} ms (goal < 300 ms)${again.missing}, peak RSS ${(again.rss.stop() / MB).toFixed(0)} MB (${load()})`);
  const [pageMs, page] = await timed(() => ok(again.service, `/api/messages/${made.big.id}?limit=50`));
  row(`restart: newest page of the ${(made.big.bytes / MB).toFixed(0)} MB rollout`, `${pageMs.toFixed(1)} ms (goal < 100 ms; ${page.messages.length} of ${page.total} messages) (${load()})`);
  await again.service.stop();
}

/** Usage's first pass: a service without its aggregates, the whole range. */
async function usagePass(home: string, made: HistoryHome, bytes: number, what = 'usage, first pass', env = serviceEnv(made)): Promise<number> {
  for (const f of ['usage-aggregates.sqlite', 'usage-aggregates.sqlite-wal', 'usage-aggregates.sqlite-shm', 'usage-aggregates.json']) await rm(path.join(home, '.space-state', f), { force: true });
  const fresh = await startChildService({ home, env, entry: START });
  try {
    const [ms, usage] = await timed(() => ok(fresh, '/api/usage?days=3650&origin=terminal'));
    row(what, `${(ms / 1000).toFixed(1)} s, ${mbps(bytes, ms)} over ${(bytes / MB).toFixed(0)} MB of logs (${usage.by_session.length} sessions with usage) (${load()})`);
    return bytes / ms;
  } finally {
    await fresh.stop();
  }
}

/**
 * The same pass over the Codex rollouts alone (no Claude Code history: an empty
 * CLAUDE_CONFIG_DIR), in a HOME of its own whose first start is let through first.
 */
async function codexUsagePass(root: string, made: HistoryHome): Promise<number> {
  const [home, noClaude] = [path.join(root, 'codex-only'), path.join(root, 'no-claude')];
  await Promise.all([mkdir(home), mkdir(noClaude)]);
  const env = { ...serviceEnv(made), CLAUDE_CONFIG_DIR: noClaude };
  const first = await startChildService({ home, env, entry: START });
  await ok(first, '/api/usage?days=3650&origin=terminal');
  await first.stop();
  // The compressed rollouts' content too: the service reads it in place (ccusage does not read them).
  const bytes = files(made.codexHome, '.jsonl').reduce((n, f) => n + statSync(f).size, 0) + made.compressedBytes;
  return usagePass(home, made, bytes, 'usage, first pass, Codex alone', env);
}

async function main(): Promise<void> {
  const build = spawnSync(process.execPath, [path.join('build', 'ensure-built.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed');
  const made = historyHome(CACHE, { sessions: SESSIONS, bytes: BYTES, bigBytes: BIG });
  row('history', `${made.total} sessions (${made.subagents} sub-agents): ${(made.claudeBytes / MB).toFixed(0)} MB Claude Code, ${(made.codexBytes / MB).toFixed(0)} MB Codex (${made.compressed} rollouts, ${(made.compressedBytes / MB).toFixed(0)} MB, compressed), + one rollout of ${(made.big.bytes / MB).toFixed(0)} MB; files median ${(made.median / 1024).toFixed(0)} KB, largest ${(made.largest / MB).toFixed(0)} MB${made.writeSeconds ? `; written in ${made.writeSeconds.toFixed(0)} s` : ''} (${CACHE})`);
  const root = await mkdtemp(path.join(os.tmpdir(), 'history-bench-'));
  const home = path.join(root, 'home');
  await mkdir(home);
  try {
    const service = await firstStart(home, made);
    await terminalAppend(service, made);
    await service.stop();
    // HISTORY_BENCH_FIRST_ONLY=1: the first start alone (a change to it measured quickly).
    if (process.env.HISTORY_BENCH_FIRST_ONLY) return;
    await restart(home, made);
    // Every plain file (sub-agents' included); usage also reads the compressed rollouts' content in place.
    const plain = [...files(path.join(made.claudeDir, 'projects'), '.jsonl'), ...files(made.codexHome, '.jsonl')];
    const plainBytes = plain.reduce((n, f) => n + statSync(f).size, 0);
    const serviceRate = await usagePass(home, made, plainBytes + made.compressedBytes);
    const codexRate = await codexUsagePass(root, made);

    const [parseMs] = await timed(() => bareParse(plain));
    row('bare JSON.parse loop (one thread)', `${(parseMs / 1000).toFixed(1)} s, ${mbps(plainBytes, parseMs)} over ${(plainBytes / MB).toFixed(0)} MB of plain files; usage ${((serviceRate / (plainBytes / parseMs)) * 100).toFixed(0)} % of it (${load()})`);

    const claudeMs = ccusage('claude', { CLAUDE_CONFIG_DIR: made.claudeDir, HOME: root });
    if (claudeMs === undefined) row('ccusage', 'not installed (node test/tools/programs.mjs): skipped');
    else {
      row('ccusage claude daily (Claude Code files)', `${(claudeMs / 1000).toFixed(1)} s, ${mbps(made.claudeBytes, claudeMs)} over ${(made.claudeBytes / MB).toFixed(0)} MB; usage ${(serviceRate / (made.claudeBytes / claudeMs)).toFixed(2)}x its bytes/s (${load()})`);
      const codexMs = ccusage('codex', { CODEX_HOME: made.codexHome, HOME: root })!;
      // What ccusage reads: the plain rollouts (it has no zstd reader).
      const codexBytes = made.codexBytes + made.big.bytes - made.compressedBytes;
      row('ccusage codex daily (Codex files)', `${(codexMs / 1000).toFixed(1)} s, ${mbps(codexBytes, codexMs)} over ${(codexBytes / MB).toFixed(0)} MB; usage ${(serviceRate / (codexBytes / codexMs)).toFixed(2)}x its bytes/s, usage over Codex alone ${(codexRate / (codexBytes / codexMs)).toFixed(2)}x (${load()})`);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();

/**
 * The user's terminal history (docs/history.md) on a real service process started as
 * `npm start` starts it, over a generated home shaped as the programs write it: half Claude
 * Code sessions (`~/.claude/projects/<key>/<id>.jsonl`, the CLI's records: one per content
 * block, usage repeated, `requestId`s), half Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/
 * rollout-*.jsonl`: session_meta, turn_context, response_items, token_count), 10% of the
 * rollouts compressed to `.jsonl.zst` with the zstd CLI as Codex does.
 * Figures, each beside the load average:
 * - first start: spawn to the first complete first page (every session listed and titled),
 *   peak RSS to then; the kept copies' first pass (bytes copied, time);
 * - restart: spawn to the first complete first page;
 * - a terminal append (a new prompt in the newest Claude Code session) to the listing showing it;
 * - usage's first pass (/api/usage over the whole range, a fresh service) in MB/s, beside
 *   ccusage (`claude daily --json --offline`) over the same Claude Code files and a bare
 *   `JSON.parse` loop over every plain file.
 * Scale: HISTORY_BENCH_SESSIONS (default 2,000) and HISTORY_BENCH_TURNS (turns per session,
 * 1..N, default 30). The issue's goal is 20,000 sessions / 5 GB: not run here (see
 * docs/benchmarks.md).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startChildService, type ChildService } from '../test/helpers/child-service.js';
import { programPath } from '../test/tools/programs.mjs';
import { writeClaudeLayout } from './claude-layout.js';
import { random, sentence, turns, uuid, writeCorpus, type TurnShape } from './corpus.js';
import { MB, ok, row, sampleRss, timed } from './lib.js';

const SESSIONS = Number(process.env.HISTORY_BENCH_SESSIONS ?? 2000);
const MAX_TURNS = Number(process.env.HISTORY_BENCH_TURNS ?? 30);
const START = 'build/start.mjs';
const load = (): string => `load ${os.loadavg()[0]!.toFixed(1)}`;

/** A Codex rollout of `shapes` (the records and keys codex 0.169 writes, test/fixtures/sessions/clib-rollout). */
function rolloutLines(id: string, shapes: TurnShape[], start: number, cwd: string): string[] {
  let t = start;
  const at = (): string => new Date((t += 1000)).toISOString();
  const out = [JSON.stringify({ timestamp: at(), type: 'session_meta', payload: { id, session_id: id, timestamp: at(), cwd, originator: 'codex_exec', cli_version: '0.169.0', source: 'exec', model_provider: 'openai' } })];
  const total = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, total_tokens: 0 };
  for (const turn of shapes) {
    out.push(JSON.stringify({ timestamp: at(), type: 'turn_context', payload: { cwd, approval_policy: 'on-request', model: 'gpt-5.5' } }));
    out.push(JSON.stringify({ timestamp: at(), type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: turn.prompt }] } }));
    out.push(JSON.stringify({ timestamp: at(), type: 'event_msg', payload: { type: 'user_message', message: turn.prompt } }));
    out.push(JSON.stringify({ timestamp: at(), type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: turn.reply }] } }));
    const last = { input_tokens: 13000 + turn.prompt.length, cached_input_tokens: 5000, cache_write_input_tokens: 0, output_tokens: Math.ceil(turn.reply.length / 4), reasoning_output_tokens: 16, total_tokens: 0 };
    last.total_tokens = last.input_tokens + last.output_tokens;
    for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += last[k];
    out.push(JSON.stringify({ timestamp: at(), type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: { ...total }, last_token_usage: last, model_context_window: 258400 } } }));
  }
  return out;
}

/** The history home: Claude Code's half from a clia corpus in the CLI's layout, Codex's written here. */
async function writeHistory(home: string): Promise<{ newestClaude: string; claudeBytes: number; codexBytes: number; compressed: number }> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'history-bench-src-'));
  // writeCorpus spreads over three runtimes; its clia third becomes Claude Code's files.
  await writeCorpus(scratch, { sessions: Math.ceil(SESSIONS / 2) * 3, maxTurns: MAX_TURNS, perAgent: 200, datedFiles: true });
  const claudeBytes = await writeClaudeLayout(path.join(scratch, 'clia-space'), home);
  await rm(scratch, { recursive: true, force: true });
  const rand = random(11);
  let codexBytes = 0;
  let compressed = 0;
  const now = Date.now();
  for (let i = 0; i < Math.floor(SESSIONS / 2); i++) {
    const id = uuid(rand);
    const start = now - Math.floor(rand() * 365 * 86_400_000);
    const day = new Date(start).toISOString().slice(0, 10).split('-');
    const dir = path.join(home, '.codex', 'sessions', ...day);
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `rollout-${new Date(start).toISOString().slice(0, 19).replace(/:/g, '-')}-${id}.jsonl`);
    const text = `${rolloutLines(id, turns(rand, 1 + Math.floor(rand() * MAX_TURNS)), start, `/home/user/work/${sentence(rand, 1)}`).join('\n')}\n`;
    await writeFile(file, text);
    codexBytes += text.length;
    if (i % 10 === 0) {
      execFileSync('zstd', ['-q', '--rm', file]);
      compressed++;
    }
  }
  const claudeFiles = plainFiles(path.join(home, '.claude', 'projects'));
  const newestClaude = claudeFiles.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]!;
  return { newestClaude, claudeBytes, codexBytes, compressed };
}

function plainFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => path.join(dir, f));
}

async function firstPage(home: string, total: number): Promise<{ service: ChildService; ms: number; peakRss: () => number }> {
  const started = process.hrtime.bigint();
  const service = await startChildService({ home, env: { SPACE_LOG_LEVEL: 'info' }, entry: START });
  const rss = sampleRss(service.pid);
  for (;;) {
    const body = await ok(service, '/api/sessions?origin=terminal');
    if (body.total === total && body.sessions.every((s: any) => s.title)) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  return { service, ms: Number(process.hrtime.bigint() - started) / 1e6, peakRss: () => rss.stop() };
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'history-bench-'));
  const home = path.join(root, 'home');
  try {
    const [writeMs, made] = await timed(() => writeHistory(home));
    const total = Math.ceil(SESSIONS / 2) + Math.floor(SESSIONS / 2);
    row('history', `${total} sessions: ${(made.claudeBytes / MB).toFixed(0)} MB Claude Code, ${(made.codexBytes / MB).toFixed(0)} MB Codex (${made.compressed} rollouts compressed), written in ${(writeMs / 1000).toFixed(1)} s`);

    const first = await firstPage(home, total);
    row('first start: first complete page', `${first.ms.toFixed(0)} ms, peak RSS ${(first.peakRss() / MB).toFixed(0)} MB (${load()})`);
    // The kept copies: the first pass copies every plain file once (and decompresses the .zst ones).
    const keptStarted = Date.now();
    const keptDir = path.join(home, '.space-state', 'history');
    const expected = made.claudeBytes + made.codexBytes;
    for (;;) {
      const kept = ['clia', 'clib'].flatMap((d) => plainFiles(path.join(keptDir, d)).map((f) => statSync(f).size)).reduce((a, b) => a + b, 0);
      if (kept >= Math.min(expected, 2048 * MB) * 0.99 || Date.now() - keptStarted > 600_000) {
        row('kept copies, first pass', `${(kept / MB).toFixed(0)} MB in ${((Date.now() - keptStarted) / 1000).toFixed(1)} s after the first page (${load()})`);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }

    // A terminal append: a new prompt in the newest Claude Code session.
    const before = (await ok(first.service, '/api/sessions?origin=terminal&limit=1')).sessions[0];
    const line = (await readFile(made.newestClaude, 'utf8')).split('\n').find((l) => l.includes('"type":"user"'))!;
    const [appendMs] = await timed(async () => {
      await appendFile(made.newestClaude, `${line.replace(/"content":"[^"]*"/, '"content":"one more prompt from the terminal"')}\n`);
      for (;;) {
        const s = (await ok(first.service, `/api/sessions/${before.session_id}`)) as any;
        if (s.message_count > before.message_count) break;
        await new Promise((r) => setTimeout(r, 5));
      }
    });
    row('terminal append to the listing', `${appendMs.toFixed(0)} ms (${load()})`);
    await first.service.stop();

    const restart = await firstPage(home, total);
    row('restart: first complete page', `${restart.ms.toFixed(0)} ms, peak RSS ${(restart.peakRss() / MB).toFixed(0)} MB (${load()})`);
    await restart.service.stop();

    // Usage's first pass on a fresh service state (the history and its copies kept, the aggregates dropped).
    for (const f of ['usage-aggregates.sqlite', 'usage-aggregates.sqlite-wal', 'usage-aggregates.sqlite-shm']) await rm(path.join(home, '.space-state', f), { force: true });
    const fresh = await startChildService({ home, env: { SPACE_LOG_LEVEL: 'warn' }, entry: START });
    const [usageMs, usage] = await timed(() => ok(fresh, '/api/usage?days=3650&origin=terminal'));
    await fresh.stop();
    const plainBytes = made.claudeBytes + made.codexBytes;
    row('usage, first pass', `${usageMs.toFixed(0)} ms, ${(plainBytes / MB / (usageMs / 1000)).toFixed(0)} MB/s over ${(plainBytes / MB).toFixed(0)} MB (${usage.by_session.length} sessions with usage) (${load()})`);

    const [parseMs] = await timed(() => {
      let n = 0;
      for (const file of [...plainFiles(path.join(home, '.claude', 'projects')), ...plainFiles(path.join(home, '.codex', 'sessions'))]) {
        for (const l of readFileSync(file, 'utf8').split('\n')) if (l) n += JSON.parse(l) ? 1 : 0;
      }
      return n;
    });
    row('bare JSON.parse loop', `${parseMs.toFixed(0)} ms, ${(plainBytes / MB / (parseMs / 1000)).toFixed(0)} MB/s (${load()})`);

    const ccusage = programPath('ccusage') as string | undefined;
    if (!ccusage) row('ccusage', 'not installed (node test/tools/programs.mjs): skipped');
    else {
      const args = ['claude', 'daily', '--json', '--offline', '--timezone', 'UTC'];
      const netns = spawnSync('unshare', ['-n', 'true']).status === 0;
      const [ccMs] = await timed(() => {
        const run = netns ? spawnSync('unshare', ['-n', ccusage, ...args], { env: { ...process.env, HOME: home }, maxBuffer: 256 * MB }) : spawnSync(ccusage, args, { env: { ...process.env, HOME: home }, maxBuffer: 256 * MB });
        if (run.status !== 0) throw new Error(`ccusage failed: ${run.stderr}`);
        return JSON.parse(run.stdout.toString()).totals;
      });
      row('ccusage (Claude Code files only)', `${ccMs.toFixed(0)} ms, ${(made.claudeBytes / MB / (ccMs / 1000)).toFixed(0)} MB/s over ${(made.claudeBytes / MB).toFixed(0)} MB (${load()})`);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();

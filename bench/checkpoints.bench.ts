/**
 * Checkpoints (docs/checkpoints.md) on a generated project of 10,000 files / 200 MB: 6,000
 * source files (about 60 MB) and a node_modules/ of 4,000 files (about 140 MB), first with
 * node_modules/ in .gitignore, then with it included. Each figure is printed beside a baseline
 * measured in the same run on the same tree: plain `git add -A && git write-tree` into a
 * private index (what a store without the service's bookkeeping would do).
 * - the first checkpoint of a fresh store (cold);
 * - the checkpoint before a turn when fewer than 10 files changed since the last one: what a
 *   turn waits for before its program starts (its files staged) and the whole checkpoint
 *   (tree written and flushed, off the turn's path), p50/p95 over ROUNDS;
 * - GET /api/sessions/{id}/turns with 100 entries, and GET .../diff of 100 changed files;
 * - the store's disk growth over 100 turns that each change 10 small files.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CheckpointStore } from '../service/checkpoints/store.js';
import { TurnLedger, NO_FILES, type TurnEntry } from '../service/checkpoints/ledger.js';
import { createLogger } from '../service/log.js';
import { Supervisor } from '../service/process/supervisor.js';
import { startService } from '../test/helpers/service.js';
import { percentile, row } from './lib.js';

const ROUNDS = Number(process.env.BENCH_CHECKPOINT_ROUNDS ?? 20);
const SOURCE_FILES = 6000;
const MODULE_FILES = 4000;

console.log(`  load at start: ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
const root = await mkdtemp(path.join(os.tmpdir(), 'space-bench-cp-'));
const project = path.join(root, 'project');
const supervisor = new Supervisor(createLogger('silent'));
const limits = { maxFileBytes: 10 * 1024 * 1024, timeoutMs: 120_000, maxNewFiles: 20_000, git: 'git', path: process.env.PATH };

/** Text that compresses like source (lines of words), not like zeros. */
function sourceText(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const line = `export const v${randomBytes(4).toString('hex')} = "${randomBytes(12).toString('base64')}"; // ${randomBytes(8).toString('hex')}`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

async function generate(): Promise<number> {
  let bytes = 0;
  for (let i = 0; i < SOURCE_FILES; i++) {
    const dir = path.join(project, 'src', `m${Math.floor(i / 60)}`);
    if (i % 60 === 0) await mkdir(dir, { recursive: true });
    const text = sourceText(10_000);
    await writeFile(path.join(dir, `f${i}.ts`), text);
    bytes += text.length;
  }
  for (let i = 0; i < MODULE_FILES; i++) {
    const dir = path.join(project, 'node_modules', `pkg${Math.floor(i / 40)}`, 'lib');
    if (i % 40 === 0) await mkdir(dir, { recursive: true });
    const text = sourceText(35_000);
    await writeFile(path.join(dir, `m${i}.js`), text);
    bytes += text.length;
  }
  return bytes;
}

/** The baseline: plain `git add -A && git write-tree` into a private index and git dir. */
function plainGit(gitDir: string): number {
  const env = { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_WORK_TREE: project, GIT_INDEX_FILE: `${gitDir}/plain-index`, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: gitDir };
  const started = performance.now();
  execFileSync('git', ['add', '-A'], { cwd: project, env });
  execFileSync('git', ['write-tree'], { cwd: project, env });
  return performance.now() - started;
}

async function touchFiles(n: number, round: number): Promise<void> {
  for (let i = 0; i < n; i++) await writeFile(path.join(project, 'src', `m${i}`, `f${i * 60}.ts`), sourceText(10_000 + round));
}

function du(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) total += statSync(path.join(e.parentPath, e.name)).size;
  return total;
}

const ms = (n: number): string => `${n.toFixed(0)} ms`;

/** One checkpoint: what a turn waits for (its files staged) and the whole (tree written, flushed). */
async function timed(store: CheckpointStore): Promise<{ staged: number; recorded: number }> {
  const started = performance.now();
  let staged: number | undefined;
  const taken = await store.snapshot(project, () => (staged = performance.now() - started));
  const recorded = performance.now() - started;
  if (!taken.ok) throw new Error(taken.reason);
  return { staged: staged ?? recorded, recorded };
}

async function variant(label: string): Promise<void> {
  const storeRoot = path.join(root, `stores-${label}`);
  const plainDir = path.join(root, `plain-${label}`);
  execFileSync('git', ['init', '--bare', '-q', plainDir]);
  const store = new CheckpointStore(storeRoot, supervisor, limits);
  // Each starts with nothing dirty: the tree just generated is not written back under the first.
  execFileSync('sync');
  const cold = await timed(store);
  execFileSync('sync');
  const plainCold = plainGit(plainDir);
  row(`[${label}] first checkpoint (cold)`, `${ms(cold.recorded)} to recorded and flushed, the turn waits ${ms(cold.staged)}  (plain git add+write-tree, fresh index, unflushed: ${ms(plainCold)}); store ${(du(storeRoot) / 1e6).toFixed(1)} MB`);

  const waits: number[] = [];
  const recorded: number[] = [];
  const plain: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await touchFiles(5, round);
    const one = await timed(store);
    waits.push(one.staged);
    recorded.push(one.recorded);
    plain.push(plainGit(plainDir));
  }
  row(
    `[${label}] checkpoint, 5 files changed`,
    `the turn waits p50 ${ms(percentile(waits, 50))}, p95 ${ms(percentile(waits, 95))}; recorded p50 ${ms(percentile(recorded, 50))}, p95 ${ms(percentile(recorded, 95))}  (plain: p50 ${ms(percentile(plain, 50))}, p95 ${ms(percentile(plain, 95))})`,
  );
}

try {
  const bytes = await generate();
  await writeFile(path.join(project, '.gitignore'), 'node_modules/\n');
  console.log(`  tree: ${SOURCE_FILES + MODULE_FILES} files, ${(bytes / 1e6).toFixed(0)} MB (node_modules: ${MODULE_FILES} files)`);
  await variant('node_modules ignored');

  // Turns list and diff through HTTP, on the ignored variant's tree.
  await mkdir(path.join(root, 'home'));
  const svc = await startService({ home: path.join(root, 'home') });
  try {
    const checkpoints = svc.service.ctx.checkpoints;
    const ledger = new TurnLedger(path.join(root, 'home', '.space-state', 'checkpoints', 'turns'));
    const before = await checkpoints.store.snapshot(project);
    await touchFiles(100, 1000);
    const after = await checkpoints.store.snapshot(project);
    if (!before.ok || !after.ok) throw new Error('snapshot failed');
    const entry = (i: number): TurnEntry => ({
      turn_id: `t${i}`, kind: 'turn', stream_id: null, user_message_id: null, prompt: `turn ${i}`, started_at: new Date().toISOString(), ended_at: new Date().toISOString(),
      status: 'done', files: NO_FILES, directory: project, pre: { tree: before.tree, skipped: [] }, post: { tree: after.tree, skipped: [] }, note: null, not_covered: [], run_id: 'bench',
    });
    for (let i = 0; i < 100; i++) await ledger.put('bench-session', entry(i));
    const list: number[] = [];
    const diff: number[] = [];
    for (let i = 0; i < ROUNDS + 2; i++) {
      let t = performance.now();
      const l = await svc.get('/api/sessions/bench-session/turns');
      if (i >= 2) list.push(performance.now() - t);
      if (l.json().turns.length !== 100) throw new Error('turns list');
      t = performance.now();
      const d = await svc.get('/api/sessions/bench-session/turns/t5/diff');
      if (i >= 2) diff.push(performance.now() - t);
      if (d.json().files.length !== 100) throw new Error(`diff has ${d.json().files.length} files`);
    }
    const storeDir = (await checkpoints.store.storeOf(project)).gitDir;
    const env = { PATH: process.env.PATH, GIT_DIR: storeDir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
    const t = performance.now();
    execFileSync('git', ['diff-tree', '-r', '-p', before.tree, after.tree], { env, maxBuffer: 1 << 30 });
    const plainDiff = performance.now() - t;
    row('GET turns (100 entries)', `p50 ${percentile(list, 50).toFixed(1)} ms, p95 ${percentile(list, 95).toFixed(1)} ms`);
    row('GET diff (100 changed files)', `p50 ${percentile(diff, 50).toFixed(1)} ms, p95 ${percentile(diff, 95).toFixed(1)} ms  (plain git diff-tree -p: ${plainDiff.toFixed(1)} ms)`);

    // Disk: 100 turns (a checkpoint before and after each) of 10 small files each.
    const storeRoot = path.dirname(storeDir);
    const base = du(storeRoot);
    for (let turn = 0; turn < 100; turn++) {
      await checkpoints.store.snapshot(project);
      for (let i = 0; i < 10; i++) await writeFile(path.join(project, 'src', `m${i}`, `small-${i}.txt`), `turn ${turn} file ${i} ${randomBytes(16).toString('hex')}\n`);
      await checkpoints.store.snapshot(project);
    }
    row('disk: 100 turns x 10 small files', `+${((du(storeRoot) - base) / 1e6).toFixed(2)} MB beyond the first checkpoints (store ${(du(storeRoot) / 1e6).toFixed(1)} MB)`);
  } finally {
    await svc.close();
  }

  await writeFile(path.join(project, '.gitignore'), '');
  await variant('node_modules included');
} finally {
  await supervisor.stopAll();
  await rm(root, { recursive: true, force: true });
  console.log(`  load at end: ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
}

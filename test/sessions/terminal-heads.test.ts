import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Foreground } from '../../service/process/foreground.js';
import { readHead, type Head } from '../../service/sessions/head.js';
import { TerminalHeadReader, type HeadJob } from '../../service/sessions/terminal-head-reader.js';
import { headBuffer, readTerminalHeadSync } from '../../service/sessions/terminal-head-sync.js';
import { startService } from '../helpers/service.js';
import { FIXTURES } from './fixtures.js';

/**
 * Terminal history logs' heads (first prompt, directory, the program's own title) are read on a
 * worker thread (docs/history.md, "Speed and scale"): its answers are those of the same reader
 * in-process and, for the first prompt, of the main thread's reader of the service's own logs;
 * a page's own logs go before a pass under way; and a first page served while the pass is
 * still reading is the page served once every head is read.
 */
async function recorded(): Promise<HeadJob[]> {
  const jobs: HeadJob[] = [];
  for (const [dir, format] of [['clia-native', 'clia'], ['clib-rollout', 'clib-rollout'], ['clib-subagent', 'clib-rollout']] as const) {
    for (const f of await readdir(path.join(FIXTURES, dir))) if (f.endsWith('.jsonl')) jobs.push([path.join(FIXTURES, dir, f), format]);
  }
  return jobs;
}

function readAll(reader: TerminalHeadReader, jobs: HeadJob[], now = false): Promise<Map<string, Head | undefined>> {
  const out = new Map<string, Head | undefined>();
  return reader.read(jobs, (file, head) => out.set(file, head), now).then(() => out);
}

/** `n` copies of a recorded Claude Code session in `dir`, as jobs. */
async function copies(dir: string, n: number): Promise<HeadJob[]> {
  const text = await readFile(path.join(FIXTURES, 'clia-native', 'b3ae9e06-f283-4f86-b666-4daa715badec.jsonl'));
  const jobs: HeadJob[] = [];
  for (let i = 0; i < n; i++) {
    const file = path.join(dir, `${i}.jsonl`);
    await writeFile(file, text);
    jobs.push([file, 'clia']);
  }
  return jobs;
}

describe('the terminal heads worker', () => {
  const reader = new TerminalHeadReader();
  afterAll(() => reader.close());

  it('answers what the reader answers in-process, and the first prompt of the main thread reader', async () => {
    const jobs = await recorded();
    expect(jobs.length).toBeGreaterThan(10);
    const heads = await readAll(reader, jobs);
    const buffer = headBuffer();
    for (const [file, format] of jobs) {
      const head = heads.get(file);
      expect(head, file).toEqual(readTerminalHeadSync(file, format, buffer));
      expect(head?.prompt, file).toBe((await readHead(file, format)).prompt);
    }
    // The recorded sessions are titled and placed.
    const claude = heads.get(path.join(FIXTURES, 'clia-native', 'b3ae9e06-f283-4f86-b666-4daa715badec.jsonl'));
    expect(claude).toMatchObject({ prompt: 'Say hello', directory: '/home/user/rt-claude/fx/proj', final: true });
    expect(heads.get(path.join(FIXTURES, 'clib-rollout', 'rollout-2026-11-21T15-10-00-01a1fea8-3aa0-7090-8b45-f828b20a9d33.jsonl'))).toMatchObject({ prompt: 'Say hello via app-server', directory: '/home/user/rt-codex/fx/proj' });
  });

  it('answers a gone log with nothing', async () => {
    const gone = path.join(os.tmpdir(), `no-such-${randomUUID()}.jsonl`);
    expect([...(await readAll(reader, [[gone, 'clia']]))]).toEqual([[gone, undefined]]);
  });

  it('reads logs asked for now before the rest of a pass under way', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'terminal-heads-'));
    try {
      const many = await copies(dir, 1500);
      const order: string[] = [];
      const pass = reader.read(many, (file) => order.push(file));
      const [last] = many[many.length - 1]!;
      await reader.read([[last, 'clia']], (file) => order.push(`now:${file}`), true);
      await pass;
      // The worker reads at most one batch (64 logs) of the pass before the log asked for now.
      expect(order.indexOf(`now:${last}`)).toBeLessThan(200);
      expect(order).toHaveLength(1501);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the heads worker during a foreground pass', () => {
  it('reads only logs asked for now while one runs (a count a page waits for), the rest once it ended', async () => {
    const foreground = new Foreground();
    const reader = new TerminalHeadReader(foreground.memory);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'terminal-heads-fg-'));
    try {
      const jobs = await copies(dir, 20);
      const read: string[] = [];
      let end!: () => void;
      const pass = foreground.run(() => new Promise<void>((resolve) => (end = resolve)));
      const rest = reader.read(jobs.slice(1), (file) => read.push(file));
      const [now] = jobs[0]!;
      expect([...(await readAll(reader, [jobs[0]!], true)).keys()]).toEqual([now]);
      // Well past a batch (50 ms): nothing of the pass was read meanwhile.
      await new Promise((r) => setTimeout(r, 400));
      expect(read).toEqual([]);
      end();
      await pass;
      await rest;
      expect(read.sort()).toEqual(jobs.slice(1).map(([f]) => f).sort());
    } finally {
      reader.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a first page served while the heads are still being read', () => {
  let home: string;
  const SOURCE_ID = 'b3ae9e06-f283-4f86-b666-4daa715badec';
  const CODEX_FILE = 'rollout-2026-11-21T15-10-00-01a1fea8-3aa0-7090-8b45-f828b20a9d33.jsonl';

  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'terminal-heads-page-'));
    const claude = await readFile(path.join(FIXTURES, 'clia-native', `${SOURCE_ID}.jsonl`), 'utf8');
    const codex = await readFile(path.join(FIXTURES, 'clib-rollout', CODEX_FILE), 'utf8');
    const projects = path.join(home, '.claude', 'projects', '-home-user-rt-claude-fx-proj');
    const day = path.join(home, '.codex', 'sessions', '2026', '11', '21');
    await mkdir(projects, { recursive: true });
    await mkdir(day, { recursive: true });
    const now = Date.now() / 1000;
    // Many sessions, each with its own time, half of each program.
    for (let i = 0; i < 1200; i++) {
      const id = randomUUID();
      const file = i % 2 === 0 ? path.join(projects, `${id}.jsonl`) : path.join(day, `rollout-2026-11-21T15-10-00-${id}.jsonl`);
      const text = i % 2 === 0 ? claude.replaceAll(SOURCE_ID, id) : codex;
      await writeFile(file, text);
      await utimes(file, now - i * 60, now - i * 60);
    }
  });

  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('is the page served once every head is read', async () => {
    const svc = await startService({ home });
    try {
      const first = (await svc.get('/api/sessions?origin=terminal')).json();
      // Search waits for every title: the heads pass is over when it answers.
      expect((await svc.get('/api/sessions/search?q=say%20hello')).status).toBe(200);
      const later = (await svc.get('/api/sessions?origin=terminal')).json();
      expect(first.total).toBe(1200);
      expect(first).toEqual(later);
      expect(first.sessions).toHaveLength(50);
      for (const [i, s] of first.sessions.entries()) {
        expect(s).toMatchObject(i % 2 === 0 ? { title: 'Say hello', message_count: 9, directory: '/home/user/rt-claude/fx/proj' } : { title: 'Say hello via app-server', message_count: 4, directory: '/home/user/rt-codex/fx/proj' });
      }
    } finally {
      await svc.close();
    }
  });
});

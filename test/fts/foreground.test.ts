import { readdirSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../service/config.js';
import { createService } from '../../service/index.js';
import { createHeadlessHost } from '../../service/host.js';
import { createLogger } from '../../service/log.js';
import { Foreground, whenNoForeground } from '../../service/process/foreground.js';
import { BACKGROUND_NICE } from '../../service/process/thread-priority.js';
import { UsageStore } from '../../service/usage/store.js';
import { send, startService } from '../helpers/service.js';
import { indexReady, seedStores } from './seed.js';

/**
 * Background indexing gives the cores to passes a user waits for: the full-text build does
 * not start a background job while a foreground pass (the usage report's cold pass) runs.
 */
let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'fts-foreground-'));
  await seedStores(home);
});
afterAll(() => rm(home, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the full-text build and foreground passes', () => {
  it('waits while a pass runs, then indexes everything', async () => {
    const config = loadConfig({ PATH: process.env.PATH, HOME: home, SPACE_PORT: '0', SPACE_HOST: '127.0.0.1' });
    const sink = new Writable({ write: (_chunk, _enc, done) => done() });
    const service = createService({ config, host: createHeadlessHost(), log: createLogger('info', sink) });
    let release!: () => void;
    const pass = service.ctx.foreground.run(() => new Promise<void>((resolve) => (release = resolve)));
    const { port } = await service.listen();
    try {
      const status = async () => (await send(port, 'GET', '/api/fts/index/all')).json();
      await sleep(2500); // the whole build takes well under a second when nothing holds it
      const held = await status();
      expect(held.status).toBe('indexing');
      expect(held.documents).toBe(0);
      release();
      await pass;
      await expect.poll(async () => (await status()).status, { timeout: 20_000 }).toBe('ready');
      expect((await status()).documents).toBeGreaterThan(0);
    } finally {
      release();
      await service.close();
    }
  });

  it("waits for a restart's usage window pass at start, and no longer than its bound", async () => {
    const config = loadConfig({ PATH: process.env.PATH, HOME: home, SPACE_PORT: '0', SPACE_HOST: '127.0.0.1' });
    const sink = new Writable({ write: (_chunk, _enc, done) => done() });
    // The usage view's first pass at start, held (as a long one would be).
    const held = vi.spyOn(UsageStore.prototype, 'warmFromSaved').mockImplementation(() => new Promise<void>(() => undefined));
    const started = Date.now();
    const service = createService({ config, host: createHeadlessHost(), log: createLogger('info', sink) });
    const { port } = await service.listen();
    try {
      const status = async () => (await send(port, 'GET', '/api/fts/index/all')).json();
      await sleep(800); // the whole build takes well under a second when nothing holds it
      expect((await status()).status).toBe('idle');
      // Never released: the build starts once the bound (2 s) has passed.
      await expect.poll(async () => (await status()).status, { timeout: 20_000 }).toBe('ready');
      expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    } finally {
      held.mockRestore();
      await service.close();
    }
  });
});

/** Nice values of this process's threads, by thread id (Linux /proc). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      nices.set(Number(tid), Number(fields[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return nices;
}

describe('the indexing thread', () => {
  it.runIf(process.platform === 'linux')('runs at a lower CPU priority than the rest of the service, and alone', async () => {
    const svc = await startService({ home });
    try {
      await indexReady(svc);
      const nices = threadNices();
      const background = [...nices].filter(([, nice]) => nice === BACKGROUND_NICE);
      expect(background).toHaveLength(1);
      expect(background[0]![0]).not.toBe(process.pid);
      expect(nices.get(process.pid)).toBe(0);
    } finally {
      await svc.close();
    }
    await expect.poll(() => [...threadNices().values()].filter((nice) => nice === BACKGROUND_NICE), { timeout: 10_000 }).toEqual([]);
  });
});

describe('whenNoForeground', () => {
  it('resolves when the last pass ends, not before', async () => {
    const foreground = new Foreground();
    const ends: Array<() => void> = [];
    const passes = [1, 2].map(() => foreground.run(() => new Promise<void>((resolve) => ends.push(resolve))));
    let free = false;
    const waiting = whenNoForeground(foreground.memory).then(() => (free = true));
    ends[0]!();
    await passes[0];
    await sleep(50);
    expect(free).toBe(false);
    ends[1]!();
    await waiting;
    expect(foreground.busy()).toBe(false);
  });

  it('gives up waiting after its bound, so background work is delayed, never starved', async () => {
    const foreground = new Foreground();
    let end!: () => void;
    const pass = foreground.run(() => new Promise<void>((resolve) => (end = resolve)));
    const started = Date.now();
    await whenNoForeground(foreground.memory, 150);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(foreground.busy()).toBe(true);
    end();
    await pass;
  });
});

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { isBuiltin } from 'node:module';
import { appendFile, cp, mkdtemp, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCorpus } from '../../bench/corpus.js';
import { startChildService, type ChildService } from '../helpers/child-service.js';

/**
 * `npm start` (and `npm run app`) build only when the sources changed since the last build:
 * build/ensure-built.mjs run on a copy of the project, as package.json's scripts run it
 * (`npm start` runs build/start.mjs: the same check, then the service in the same process).
 */
const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
let copy: string;

const ensureBuilt = async (): Promise<string> => (await run(process.execPath, [path.join(copy, 'build', 'ensure-built.mjs')], { cwd: copy })).stderr;
const mtimeOf = async (file: string): Promise<number> => (await stat(path.join(copy, file))).mtimeMs;

beforeAll(async () => {
  // A space in the path, as in many users' folders (the scripts must still know they run as scripts).
  copy = await mkdtemp(path.join(os.tmpdir(), 'space start-'));
  for (const entry of ['service', 'main', 'preload', 'build', 'templates', 'config', 'web', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) {
    await cp(path.join(root, entry), path.join(copy, entry), { recursive: true });
  }
  await symlink(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
}, 60_000);

afterAll(async () => {
  await rm(copy, { recursive: true, force: true });
});

describe('npm start builds only what changed', () => {
  it('the scripts run the check, then the prebuilt service (npm start: both in one process)', async () => {
    const scripts = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')).scripts;
    expect(scripts.start).toBe('node build/start.mjs');
    expect(scripts.app).toBe('node build/ensure-built.mjs && electron .');
  });

  it('builds from nothing, then not at all while nothing changed, then again after a change or a lost output', async () => {
    expect(await ensureBuilt()).toMatch(/space: built in/);
    const cli = await mtimeOf('dist/service/cli.js');
    expect(await ensureBuilt()).toBe('');
    expect(await mtimeOf('dist/service/cli.js')).toBe(cli);

    await appendFile(path.join(copy, 'service', 'log.ts'), '\n// a change the build must carry\n');
    expect(await ensureBuilt()).toMatch(/space: built in/);
    expect(await readFile(path.join(copy, 'dist', 'service', 'log.js'), 'utf8')).toContain('// a change the build must carry');
    expect(await ensureBuilt()).toBe('');

    await unlink(path.join(copy, 'dist', 'service', 'cli.js'));
    expect(await ensureBuilt()).toMatch(/space: built in/);
    await expect(stat(path.join(copy, 'dist', 'service', 'cli.js'))).resolves.toBeTruthy();
  }, 180_000);

  it('the start entries are one bundle each and answer as the sources do, worker threads included', async () => {
    await ensureBuilt();
    // One file: what it imports is Node's own modules and the packages left external (native, Electron's).
    for (const entry of ['dist/service/cli.js', 'dist/service/headless.cjs', 'dist/main/index.js']) {
      const text = await readFile(path.join(copy, entry), 'utf8');
      const imported = [
        ...[...text.matchAll(/(?:^|[;}\s])(?:import|export)\s*(?:[\w*{}\s,$]+from\s*)?["']([^"']+)["']/g)].map((m) => m[1]!),
        // ws asks for its optional native helpers inside a try (an ES bundle does it through __require).
        ...(entry.endsWith('.cjs') ? [...text.matchAll(/\brequire\(["']([^"']+)["']\)/g)].map((m) => m[1]!).filter((name) => !['bufferutil', 'utf-8-validate'].includes(name)) : []),
      ];
      if (entry.endsWith('.cjs')) expect(imported, entry).toContain('better-sqlite3');
      expect(imported.filter((name) => !isBuiltin(name) && !['electron', 'electron-store', 'electron-updater', 'better-sqlite3', 'node-pty'].includes(name)), entry).toEqual([]);
    }
    const home = await mkdtemp(path.join(os.tmpdir(), 'space-start-home-'));
    try {
      await writeCorpus(home, { sessions: 60, perAgent: 10, now: Date.now() - 3_600_000 });
      const answers = async (entry: string): Promise<unknown> => {
        await rm(path.join(home, '.space-state'), { recursive: true, force: true });
        const service = await startChildService({ home, entry });
        try {
          const get = async (target: string): Promise<any> => {
            const res = await service.request('GET', target);
            expect(res.status, res.text).toBe(200);
            return res.json();
          };
          // The full-text index runs on a worker thread started from its own file in dist/.
          let fts: any;
          for (let i = 0; i < 600 && (fts = await get('/api/fts/index/all')).status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 100));
          return { sessions: await get('/api/sessions?limit=1000'), usage: await get('/api/usage?days=3650'), fts: { status: fts.status, sessions: fts.sessions, messages: fts.messages }, search: await get('/api/fts/search?q=parser') };
        } finally {
          await service.stop();
        }
      };
      // As `npm start` runs it: the check (nothing to build), then the bundle, in one process.
      const bundled = (await answers(path.join(copy, 'build', 'start.mjs'))) as any;
      expect(bundled.sessions.total).toBe(60);
      expect(bundled.fts.status).toBe('ready');
      expect(bundled.fts.sessions).toBe(60);
      expect(bundled).toEqual(await answers('service/cli.ts'));
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }, 180_000);

  it('the built service keeps a V8 code cache in the state folder, used only for the bundle it was made from', async () => {
    await ensureBuilt();
    const home = await mkdtemp(path.join(os.tmpdir(), 'space-start-cache-'));
    const cache = path.join(home, '.space-state', 'code-cache.bin');
    const bundle = await readFile(path.join(copy, 'dist', 'service', 'headless.cjs'), 'utf8');
    const key = createHash('sha256').update(`${process.version}\0${process.arch}\0`).update(bundle).digest();
    /** The cache's time stamp, or 0 while it has none with this bundle's key. */
    const written = async (): Promise<number> => {
      const file = await readFile(cache).catch(() => undefined);
      return file?.subarray(0, 32).equals(key) ? (await stat(cache)).mtimeMs : 0;
    };
    /**
     * A start that lives until its cache is written (`writes`), or past the moment it would be
     * written (3 s after the start, service/cached-start.ts), with its first page.
     */
    const start = async (writes: boolean): Promise<unknown> => {
      const before = await written();
      const service = await startChildService({ home, entry: path.join(copy, 'build', 'start.mjs') });
      try {
        const res = await service.request('GET', '/api/sessions?limit=1000');
        expect(res.status, res.text).toBe(200);
        if (writes) await expect.poll(written, { timeout: 30_000 }).not.toBe(before);
        else await new Promise((r) => setTimeout(r, 4000));
        return res.json();
      } finally {
        await service.stop();
      }
    };
    try {
      await writeCorpus(home, { sessions: 30, perAgent: 10, now: Date.now() - 3_600_000 });
      const first = await start(true);
      const made = await readFile(cache);
      expect((await stat(cache)).mode & 0o777).toBe(0o600);
      expect(made.subarray(0, 32).equals(key)).toBe(true);
      expect(made.length).toBeGreaterThan(100_000);
      // Taken by the next start (a cache V8 refused would be written again).
      const before = (await stat(cache)).mtimeMs;
      expect(await start(false)).toEqual(first);
      expect((await stat(cache)).mtimeMs).toBe(before);
      // A cache made for other code is not handed to V8: the start answers the same and replaces it.
      const foreign = Buffer.from(made);
      foreign[0]! ^= 0xff;
      await writeFile(cache, foreign);
      expect(await start(true)).toEqual(first);
      expect((await readFile(cache)).subarray(0, 32).equals(key)).toBe(true);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }, 180_000);

  it('a build that fails leaves the check to build again next time', async () => {
    await appendFile(path.join(copy, 'service', 'log.ts'), '\nconst broken: number = "text";\n');
    await expect(ensureBuilt()).rejects.toThrow();
    await expect(ensureBuilt()).rejects.toThrow();
  }, 180_000);
});

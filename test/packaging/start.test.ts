import { execFile } from 'node:child_process';
import { appendFile, cp, mkdtemp, readFile, rm, stat, symlink, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm start` (and `npm run app`) build only when the sources changed since the last build:
 * build/ensure-built.mjs run on a copy of the project, as package.json's scripts run it.
 */
const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
let copy: string;

const ensureBuilt = async (): Promise<string> => (await run(process.execPath, [path.join(copy, 'build', 'ensure-built.mjs')], { cwd: copy })).stderr;
const mtimeOf = async (file: string): Promise<number> => (await stat(path.join(copy, file))).mtimeMs;

beforeAll(async () => {
  copy = await mkdtemp(path.join(os.tmpdir(), 'space-start-'));
  for (const entry of ['service', 'main', 'preload', 'build', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) {
    await cp(path.join(root, entry), path.join(copy, entry), { recursive: true });
  }
  await symlink(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
}, 60_000);

afterAll(async () => {
  await rm(copy, { recursive: true, force: true });
});

describe('npm start builds only what changed', () => {
  it('the scripts run the check, then the prebuilt service', async () => {
    const scripts = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')).scripts;
    expect(scripts.start).toBe('node build/ensure-built.mjs && node dist/service/cli.js');
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

  it('a build that fails leaves the check to build again next time', async () => {
    await appendFile(path.join(copy, 'service', 'log.ts'), '\nconst broken: number = "text";\n');
    await expect(ensureBuilt()).rejects.toThrow();
    await expect(ensureBuilt()).rejects.toThrow();
  }, 180_000);
});

import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * electron-builder run for real on electron-builder.yml (`--linux dir`), with a stand-in for
 * the Electron binary, which cannot be downloaded here: a script carrying the fuse wire
 * (sentinel + Electron 45's default fuse states) where the real binary has it. What is
 * checked is what the config decides: the files in app.asar, the native addons unpacked
 * beside it, the fuses flipped in the binary, the updater's feed. Native modules are not
 * rebuilt for Electron's ABI (that needs Electron's headers from the network).
 */
const run = promisify(execFile);
const require = createRequire(import.meta.url);
const asar = require('@electron/asar') as { listPackage(archive: string): string[]; extractFile(archive: string, file: string): Buffer };
const { getCurrentFuseWire, FuseV1Options } = require('@electron/fuses') as {
  getCurrentFuseWire(file: string): Promise<Record<number, number>>;
  FuseV1Options: Record<string, number>;
};
const root = path.resolve(import.meta.dirname, '../..');
const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
/** Electron 45's defaults: RunAsNode, NodeOptions, Inspect and FileProtocol on; the rest off. */
const DEFAULT_WIRE = '10011001';

let stage: string;
let out: string;
beforeAll(async () => {
  stage = await mkdtemp(path.join(os.tmpdir(), 'space-pack-'));
  const electronDist = path.join(stage, 'electron-dist');
  await mkdir(path.join(electronDist, 'locales'), { recursive: true });
  await writeFile(path.join(electronDist, 'electron'), `#!/bin/sh\necho stand-in\n# ${SENTINEL}\x01\x08${DEFAULT_WIRE}\n`, { mode: 0o755 });
  await writeFile(path.join(electronDist, 'version'), '45.4.1');
  // The project as `npm run dist` sees it: compiled sources, assets, a real node_modules
  // (electron-builder's dependency walk does not follow a symlinked one).
  const app = path.join(stage, 'app');
  await mkdir(app);
  for (const entry of ['package.json', 'package-lock.json', 'electron-builder.yml', 'build', 'templates', 'config', 'web']) {
    await cp(path.join(root, entry), path.join(app, entry), { recursive: true });
  }
  await run('cp', ['-a', await realpath(path.join(root, 'node_modules')), path.join(app, 'node_modules')]);
  await run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json'), '--outDir', path.join(app, 'dist')]);
  await run(process.execPath, [path.join(root, 'node_modules/electron-builder/cli.js'), '--linux', 'dir', '--publish', 'never', `-c.electronDist=${electronDist}`, '-c.npmRebuild=false'], {
    cwd: app,
    env: { ...process.env, SPACE_UPDATE_URL: 'https://updates.example.invalid/space', ELECTRON_BUILDER_OFFLINE: '1' },
  });
  out = path.join(app, 'release', 'linux-unpacked');
}, 180_000);
afterAll(() => rm(stage, { recursive: true, force: true }));

describe('the packaged app (electron-builder --linux dir)', () => {
  it('app.asar holds the compiled app, its assets and production dependencies only', () => {
    const files = new Set(asar.listPackage(path.join(out, 'resources', 'app.asar')));
    for (const f of [
      '/package.json',
      '/dist/main/index.js',
      '/dist/preload/index.cjs',
      '/dist/service/index.js',
      // Worker threads load their entry by file name beside the module that starts them.
      '/dist/service/files/sha256-worker.js',
      '/dist/service/usage/scan-worker.js',
      '/dist/service/fts/worker.js',
      '/dist/service/sessions/count-worker.js',
      '/dist/service/sessions/terminal-head-worker.js',
      '/web/diagnostics/index.html',
      '/web/diagnostics/app.js',
      '/templates/project/AGENTS.md',
      '/templates/project/.space/project.json',
      '/config/agents/clia_code/commands.json',
      '/node_modules/express/package.json',
      '/node_modules/electron-updater/package.json',
      '/node_modules/electron-store/package.json',
    ]) {
      expect(files.has(f), f).toBe(true);
    }
    for (const f of ['/node_modules/electron', '/node_modules/vitest', '/node_modules/typescript', '/node_modules/playwright-core', '/test', '/main', '/service', '/web/diagnostics/window.d.ts']) {
      expect(files.has(f), f).toBe(false);
    }
    expect([...files].filter((f) => f.endsWith('.map'))).toEqual([]);
    const pkg = JSON.parse(asar.extractFile(path.join(out, 'resources', 'app.asar'), 'package.json').toString());
    expect(pkg.main).toBe('dist/main/index.js');
  });

  it('node-pty and better-sqlite3 are unpacked beside the asar', async () => {
    const unpacked = path.join(out, 'resources', 'app.asar.unpacked', 'node_modules');
    await expect(readFile(path.join(unpacked, 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'))).resolves.toBeInstanceOf(Buffer);
    await expect(readFile(path.join(unpacked, 'node-pty', 'package.json'), 'utf8')).resolves.toContain('"node-pty"');
  });

  it('the fuses are flipped in the binary', async () => {
    const wire = await getCurrentFuseWire(path.join(out, 'space'));
    const state = (name: string): string => String.fromCharCode(wire[FuseV1Options[name]!]!);
    expect({
      RunAsNode: state('RunAsNode'),
      EnableNodeOptionsEnvironmentVariable: state('EnableNodeOptionsEnvironmentVariable'),
      EnableNodeCliInspectArguments: state('EnableNodeCliInspectArguments'),
      EnableEmbeddedAsarIntegrityValidation: state('EnableEmbeddedAsarIntegrityValidation'),
      OnlyLoadAppFromAsar: state('OnlyLoadAppFromAsar'),
      EnableCookieEncryption: state('EnableCookieEncryption'),
      GrantFileProtocolExtraPrivileges: state('GrantFileProtocolExtraPrivileges'),
    }).toEqual({
      RunAsNode: '0',
      EnableNodeOptionsEnvironmentVariable: '0',
      EnableNodeCliInspectArguments: '0',
      EnableEmbeddedAsarIntegrityValidation: '1',
      OnlyLoadAppFromAsar: '1',
      EnableCookieEncryption: '1',
      GrantFileProtocolExtraPrivileges: '0',
    });
  });

  it('electron-updater\'s feed is the publish config', async () => {
    const feed = await readFile(path.join(out, 'resources', 'app-update.yml'), 'utf8');
    expect(feed).toContain('provider: generic');
    expect(feed).toContain('url: https://updates.example.invalid/space');
  });
});

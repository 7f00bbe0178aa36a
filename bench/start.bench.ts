/**
 * Module loading of the service, alone: the start entry as `npm start` runs it (one esbuild
 * bundle, build/bundle.mjs) beside the same code as `tsc` emits it (one file per module,
 * express, pino, zod and the rest resolved from node_modules), in alternate runs on an empty
 * HOME:
 * - spawn to exit when the configuration is refused right after every module is loaded
 *   (SPACE_PORT invalid): module loading plus Node's own start;
 * - spawn to "listening" (nothing to index);
 * - Node's own start (`node -e 0`), for reference.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { median, row } from './lib.js';

const ROUNDS = 15;
const BUNDLE = 'dist/service/cli.js';
/** service/cli.ts over tsc's output (the bundle replaces dist/service/cli.js; the modules it imports stay). */
const TSC_CLI = `
const { ConfigError, loadConfig } = await import('./dist/service/config.js');
const { createHeadlessHost } = await import('./dist/service/host.js');
const { createService } = await import('./dist/service/index.js');
const { createLogger } = await import('./dist/service/log.js');
const { runUntilSignalled } = await import('./dist/service/run.js');
try {
  const config = loadConfig(process.env);
  const log = createLogger(config.logLevel);
  await runUntilSignalled(createService({ config, host: createHeadlessHost({ token: config.token }), log }), log);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.exit(2);
}`;

if (spawnSync(process.execPath, [path.join('build', 'ensure-built.mjs')], { stdio: 'inherit' }).status !== 0) throw new Error('the build failed');

const entries: Record<string, string[]> = {
  bundle: [BUNDLE],
  'tsc output': ['--input-type=module', '-e', TSC_CLI],
};

function untilExit(args: string[], env: NodeJS.ProcessEnv): number {
  const started = process.hrtime.bigint();
  spawnSync(process.execPath, args, { env, stdio: 'ignore' });
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function untilListening(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let ms: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (ms !== undefined || !out.includes('listening on')) return;
      ms = Number(process.hrtime.bigint() - started) / 1e6;
      child.kill('SIGTERM');
    });
    child.once('exit', (code) => (ms === undefined ? reject(new Error(`exited ${code}: ${out}`)) : resolve(ms)));
  });
}

const home = await mkdtemp(path.join(os.tmpdir(), 'space-bench-start-'));
try {
  const env = { PATH: process.env.PATH, HOME: home, SPACE_PORT: '0' };
  const times: Record<string, { loaded: number[]; listening: number[] }> = {};
  const bare: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    bare.push(untilExit(['-e', '0'], env));
    for (const [name, args] of Object.entries(entries)) {
      const t = (times[name] ??= { loaded: [], listening: [] });
      t.loaded.push(untilExit(args, { ...env, SPACE_PORT: 'not-a-port' }));
      t.listening.push(await untilListening(args, env));
    }
  }
  const load = `load ${os.loadavg()[0]!.toFixed(1)}`;
  row('node -e 0', `${median(bare).toFixed(0)} ms median (${load})`);
  for (const [name, t] of Object.entries(times)) {
    row(`${name}: every module loaded`, `${median(t.loaded).toFixed(0)} ms median (${(median(t.loaded) - median(bare)).toFixed(0)} ms over node -e 0)`);
    row(`${name}: spawn to listening`, `${median(t.listening).toFixed(0)} ms median (empty HOME; ${load})`);
  }
} finally {
  await rm(home, { recursive: true, force: true });
}

#!/usr/bin/env node
/**
 * `npm start` and `npm run app` run the built service (dist/). This builds it only when the
 * sources differ from what the last build was made of: a fingerprint of every source file's
 * path, size and mtime (and the compiler's config) is kept beside the output after a build
 * succeeds. Unchanged sources: a walk of a few hundred stats, then nothing. Changed: `tsc`
 * in incremental mode (its build info in dist/ re-checks only what a change touches), then
 * build/bundle.mjs makes each start entry one file (module loading is most of a start).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const SOURCES = ['service', 'main', 'preload'];
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'build/bundle.mjs'];
const STAMP = path.join(root, 'dist', '.build-stamp');
const BUILD_INFO = path.join(root, 'dist', 'tsconfig.build.tsbuildinfo');
const OUTPUTS = ['dist/service/cli.js', 'dist/service/headless.cjs', 'dist/main/index.js'];

function fingerprint() {
  const hash = createHash('sha256');
  const add = (file) => {
    const st = statSync(file, { throwIfNoEntry: false });
    hash.update(`${path.relative(root, file)}\0${st?.size ?? '-'}\0${st?.mtimeMs ?? '-'}\n`);
  };
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/\.(ts|mts|cts|json)$/.test(entry.name)) add(p);
    }
  };
  for (const dir of SOURCES) walk(path.join(root, dir));
  for (const file of CONFIGS) add(path.join(root, file));
  return hash.digest('hex');
}

function stamped() {
  try {
    return readFileSync(STAMP, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Builds when the sources differ from the last build's; exits the process when the build fails. */
export async function ensureBuilt() {
  const before = fingerprint();
  const outputs = OUTPUTS.every((f) => existsSync(path.join(root, f)));
  if (outputs && stamped() === before) return;
  const started = Date.now();
  // Outputs removed by hand: the build info would have tsc believe they are there.
  if (!outputs) rmSync(BUILD_INFO, { force: true });
  const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  // Loaded only to build: esbuild's start-up is not part of an unchanged start.
  await (await import('./bundle.mjs')).bundle();
  // The fingerprint of before the build: a file saved during it is built next time.
  writeFileSync(`${STAMP}.tmp`, `${before}\n`);
  renameSync(`${STAMP}.tmp`, STAMP);
  process.stderr.write(`space: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

// Run as a script (a path with spaces is percent-encoded in the module's URL).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await ensureBuilt();

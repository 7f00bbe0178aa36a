#!/usr/bin/env node
// Installs the real agent programs the real-program test lanes drive, at pinned versions,
// into a cache directory outside the repo (so `npm ci && npm start` stays lean and later
// runs on the same machine are fast). Prints nothing but one line per program.
//
//   node test/tools/programs.mjs            install what is missing
//   node test/tools/programs.mjs --paths    print {name: absolute binary path} as JSON
//
// Versions: the pinned ones in programs.json (what `npm test` runs), unless
// SPACE_TEST_PROGRAM_VERSIONS names others, `name@version` separated by commas
// (`npm run test:latest` sets it to the newest published ones; see test/tools/test-latest.mjs).
//
// Cache: $SPACE_TEST_PROGRAMS_DIR, else $XDG_CACHE_HOME/space-test-programs, else
// ~/.cache/space-test-programs. One folder per package@version; a `.done` marker is written
// only after a complete install, so an interrupted install is redone.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const PINNED = JSON.parse(readFileSync(path.join(here, 'programs.json'), 'utf8'));
export const PROGRAMS = withVersions(PINNED, process.env.SPACE_TEST_PROGRAM_VERSIONS);

/** The pinned programs with the versions an override names (`claude@2.1.332,codex@0.171.0`). */
export function withVersions(pinned, override) {
  const out = structuredClone(pinned);
  for (const item of (override ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const at = item.lastIndexOf('@');
    const name = item.slice(0, at);
    const version = item.slice(at + 1);
    if (at <= 0 || !out[name] || !/^[0-9A-Za-z.+-]+$/.test(version)) throw new Error(`SPACE_TEST_PROGRAM_VERSIONS: "${item}" is not <program>@<version> for one of ${Object.keys(out).join(', ')}`);
    out[name].version = version;
  }
  return out;
}

export function cacheDir() {
  if (process.env.SPACE_TEST_PROGRAMS_DIR) return process.env.SPACE_TEST_PROGRAMS_DIR;
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'space-test-programs');
}

function folder(name) {
  const p = PROGRAMS[name];
  return path.join(cacheDir(), `${p.package.replace('/', '+')}@${p.version}`);
}

/** Absolute path of a program's binary, or undefined when it is not installed. */
export function programPath(name) {
  const dir = folder(name);
  if (!existsSync(path.join(dir, '.done'))) return undefined;
  for (const rel of PROGRAMS[name].bins) {
    const candidate = path.join(dir, rel);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

async function install(name) {
  const p = PROGRAMS[name];
  const dir = folder(name);
  if (programPath(name)) return 'cached';
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'space-test-program', private: true }));
  // Install scripts are not needed by any of these (binaries ship inside the packages);
  // --ignore-scripts keeps them from reaching outside. Only errors are printed: the programs
  // declare newer engines than the Node that installs them (each runs on its own: node24 runs
  // OpenClaw; Claude Code and Codex are native binaries).
  await new Promise((resolve, reject) => {
    const args = ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-save', '--loglevel', 'error', `${p.package}@${p.version}`];
    const child = execFile('npm', args, { cwd: dir, maxBuffer: 64 * 1024 * 1024 }, (err) => (err ? reject(new Error(`${name}: npm install failed: ${err.message}`)) : resolve()));
    child.stderr.pipe(process.stderr);
  });
  if (!PROGRAMS[name].bins.some((rel) => existsSync(path.join(dir, rel)))) throw new Error(`${name}: no binary found after install`);
  writeFileSync(path.join(dir, '.done'), new Date().toISOString());
  return 'installed';
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--paths')) {
    console.log(JSON.stringify(Object.fromEntries(Object.keys(PROGRAMS).map((n) => [n, programPath(n) ?? null]))));
  } else {
    // Side by side: OpenClaw's install alone is most of the wait (44 of 61 s one after the other).
    // A failure waits for the other installs to end (no npm left running), then fails the run.
    const started = Date.now();
    const results = await Promise.allSettled(
      Object.keys(PROGRAMS).map(async (name) => {
        const outcome = await install(name);
        console.log(`program ${name} ${PROGRAMS[name].package}@${PROGRAMS[name].version}: ${outcome} (${Date.now() - started} ms)`);
      }),
    );
    const failed = results.filter((r) => r.status === 'rejected');
    for (const r of failed) console.error(String(r.reason.message ?? r.reason));
    if (failed.length > 0) process.exit(1);
  }
}

#!/usr/bin/env node
/**
 * The headless entry as built (`dist/service/cli.js`, build/bundle.mjs): compiles the
 * service's bundle (`headless.cjs`, about 2 MB) with a V8 code cache, then runs it. Node 20
 * keeps no compile cache for ES modules; with the cache a restart is about 55 ms closer to
 * listening (docs/startup.md). Imports only Node's modules and the heap's bound (which must be
 * set before the compile): it runs before the service exists.
 *
 * The cache lives in the state folder (`~/.space-state/code-cache.bin`, 0600), headed by the
 * SHA-256 of the bundle's text, Node's version and the architecture: a cache made for other
 * code is never handed to V8 (V8's own check compares the source's length and its flags). It is
 * written (temp, rename) a few seconds after a start that had none or had it refused, so it
 * holds the functions the start ran; a kill -9 leaves the previous file or none.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { parseHeapGrowingPercent } from './config-values.js';
import { boundHeapGrowth } from './process/heap.js';

const BUNDLE = fileURLToPath(new URL('./headless.cjs', import.meta.url));
/** The state folder as service/config.ts resolves it (HOME, else the user's home). */
const CACHE = path.join(process.env.HOME || os.homedir(), '.space-state', 'code-cache.bin');
/** Long enough for a start's first answers and its background passes to have run. */
const WRITE_AFTER_MS = 3000;
const KEY_BYTES = 32;

// Before the compile: V8 checks a code cache against the flags in force, and a flag set only
// once the service ran had every start's cache refused and written again.
try {
  boundHeapGrowth(parseHeapGrowingPercent(process.env));
} catch {
  // A value the service refuses: it says so when it reads its config (exit 2).
}
const source = readFileSync(BUNDLE, 'utf8');
const key = createHash('sha256').update(`${process.version}\0${process.arch}\0`).update(source).digest();
const cached = savedCache();
// The CommonJS wrapper on the bundle's first line, so its line numbers stay those of the file.
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: BUNDLE, ...(cached ? { cachedData: cached } : {}) });
const bundle = { exports: {} as { main?: () => Promise<void> } };
script.runInThisContext()(bundle.exports, createRequire(BUNDLE), bundle, BUNDLE, path.dirname(BUNDLE));
if (!cached || script.cachedDataRejected) setTimeout(saveCache, WRITE_AFTER_MS).unref();
await bundle.exports.main!();

function savedCache(): Buffer | undefined {
  try {
    const file = readFileSync(CACHE);
    return file.length > KEY_BYTES && file.subarray(0, KEY_BYTES).equals(key) ? file.subarray(KEY_BYTES) : undefined;
  } catch {
    return undefined;
  }
}

/** Best effort: a state folder that cannot be written only costs the next start its cache. */
function saveCache(): void {
  const temp = `${CACHE}.${process.pid}.tmp`;
  try {
    mkdirSync(path.dirname(CACHE), { recursive: true, mode: 0o700 });
    writeFileSync(temp, Buffer.concat([key, script.createCachedData()]), { mode: 0o600 });
    renameSync(temp, CACHE);
  } catch {
    // Nothing to tell: the start is not affected.
    rmSync(temp, { force: true });
  }
}

import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, realpath, rename, rmdir, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RawChange } from './diff.js';
import type { GitStore } from './git.js';
import type { CheckpointStore } from './store.js';

/**
 * Puts a turn's paths back to their bytes and modes before it: what it added is removed,
 * what it deleted or modified is written back from the store. Only those paths are touched
 * (no clean, no reset). All or nothing: each replaced file is first moved aside in its own
 * folder; a failure moves everything back and names the file.
 */
export class RestoreError extends Error {
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    super(`Could not revert ${file}: ${(cause as Error).message}`);
  }
}

export interface Restored {
  restored: string[];
  removed: string[];
}

interface Done {
  abs: string;
  backup?: string;
  wrote: boolean;
  madeDirs: string[];
}

export async function restorePaths(checkpoints: CheckpointStore, store: GitStore, changes: readonly RawChange[], targetTree: string): Promise<Restored> {
  const ordered = [...changes].sort((a, b) => (a.path < b.path ? -1 : 1));
  const blobs = await readBlobs(checkpoints, store, ordered.filter((c) => c.status !== 'added').map((c) => c.oldBlob));
  const done: Done[] = [];
  for (const change of ordered) {
    try {
      done.push(await applyOne(store.workTree, change, blobs));
    } catch (err) {
      await rollback(done);
      throw new RestoreError(change.path, err);
    }
  }
  for (const step of done) if (step.backup) await unlink(step.backup).catch(() => undefined);
  await removeEmptyDirs(checkpoints, store, ordered.filter((c) => c.status === 'added').map((c) => c.path), targetTree);
  return { restored: ordered.filter((c) => c.status !== 'added').map((c) => c.path), removed: ordered.filter((c) => c.status === 'added').map((c) => c.path) };
}

async function applyOne(root: string, change: RawChange, blobs: Map<string, Buffer>): Promise<Done> {
  const abs = path.join(root, change.path);
  const step: Done = { abs, wrote: false, madeDirs: [] };
  await insideRoot(root, path.dirname(abs), step);
  if (await lstat(abs).catch(() => undefined)) {
    step.backup = path.join(path.dirname(abs), `.${path.basename(abs)}.${randomBytes(6).toString('hex')}.space-revert`);
    await rename(abs, step.backup);
  }
  if (change.status === 'added') return step;
  const bytes = blobs.get(change.oldBlob);
  if (!bytes) throw new Error('its earlier bytes are not in the checkpoint store');
  step.wrote = true;
  if (change.oldMode === '120000') await symlink(bytes.toString('utf8'), abs);
  else {
    await writeFile(abs, bytes, { flag: 'wx' });
    await chmod(abs, change.oldMode === '100755' ? 0o755 : 0o644);
  }
  return step;
}

/** Creates missing parent folders (remembered for a rollback) and refuses one that leads outside the project. */
async function insideRoot(root: string, dir: string, step: Done): Promise<void> {
  const missing: string[] = [];
  let at = dir;
  while (!(await lstat(at).catch(() => undefined))) {
    missing.unshift(at);
    at = path.dirname(at);
  }
  const real = await realpath(at);
  if (real !== root && !real.startsWith(root + path.sep)) throw new Error('its folder leads outside the project');
  for (const made of missing) {
    await mkdir(made);
    step.madeDirs.push(made);
  }
}

async function rollback(done: readonly Done[]): Promise<void> {
  for (const step of [...done].reverse()) {
    if (step.wrote) await unlink(step.abs).catch(() => undefined);
    if (step.backup) await rename(step.backup, step.abs).catch(() => undefined);
    for (const dir of [...step.madeDirs].reverse()) await rmdir(dir).catch(() => undefined);
  }
}

/** `cat-file --batch`: every blob in one run. */
async function readBlobs(checkpoints: CheckpointStore, store: GitStore, ids: readonly string[]): Promise<Map<string, Buffer>> {
  const blobs = new Map<string, Buffer>();
  if (ids.length === 0) return blobs;
  const out = (await checkpoints.git(store, { args: ['cat-file', '--batch'], input: ids.map((id) => `${id}\n`).join(''), deadline: Date.now() + 120_000, maxStdout: 2 ** 31 - 1 })).stdout;
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at);
    const [id, type, size] = out.subarray(at, eol).toString().split(' ');
    if (type === 'missing') {
      at = eol + 1;
      continue;
    }
    const length = Number(size);
    blobs.set(id!, out.subarray(eol + 1, eol + 1 + length));
    at = eol + 1 + length + 1;
  }
  return blobs;
}

/** Folders left empty by removing added files, and absent from the target checkpoint, go too. */
async function removeEmptyDirs(checkpoints: CheckpointStore, store: GitStore, removed: readonly string[], targetTree: string): Promise<void> {
  const dirs = new Set<string>();
  for (const file of removed) for (let d = path.posix.dirname(file); d !== '.'; d = path.posix.dirname(d)) dirs.add(d);
  if (dirs.size === 0) return;
  const kept = new Set((await checkpoints.git(store, { args: ['ls-tree', '-r', '-d', '-z', '--name-only', targetTree], deadline: Date.now() + 30_000 })).stdout.toString().split('\0'));
  for (const dir of [...dirs].sort((a, b) => b.length - a.length)) if (!kept.has(dir)) await rmdir(path.join(store.workTree, dir)).catch(() => undefined);
}

import type { GitStore } from './git.js';
import { splitZ, type CheckpointStore, type SkippedFile } from './store.js';

/**
 * What changed between two checkpoints of one store: one entry per path, sorted, with a
 * unified patch per text file (cut at 256 KB), and the oversized files neither side holds
 * listed as `skipped`. Two git runs whatever the number of files: the raw list and one patch,
 * split back into files in the same order.
 */
export const PATCH_CAP_BYTES = 256 * 1024;

export type FileStatus = 'added' | 'modified' | 'deleted';

export interface ChangedFile {
  path: string;
  status: FileStatus;
  binary: boolean;
  additions: number;
  deletions: number;
  patch?: string;
  truncated?: true;
  skipped?: true;
}

/** A raw tree-diff entry: what the revert needs (the old blob and mode). */
export interface RawChange {
  path: string;
  status: FileStatus;
  oldMode: string;
  oldBlob: string;
  newMode: string;
  newBlob: string;
}

export interface FileCounts {
  added: number;
  modified: number;
  deleted: number;
  additions: number;
  deletions: number;
}

export interface Side {
  tree: string;
  skipped: readonly SkippedFile[];
}

const STATUS: Record<string, FileStatus> = { A: 'added', D: 'deleted', M: 'modified', T: 'modified' };

export async function rawChanges(checkpoints: CheckpointStore, store: GitStore, from: string, to: string, deadline = Date.now() + 60_000): Promise<RawChange[]> {
  const out = splitZ((await checkpoints.git(store, { args: ['diff-tree', '-r', '-z', '--no-renames', from, to], deadline })).stdout);
  const changes: RawChange[] = [];
  for (let i = 0; i + 1 < out.length; i += 2) {
    const [oldMode, newMode, oldBlob, newBlob, letter] = out[i]!.slice(1).split(' ');
    changes.push({ path: out[i + 1]!, status: STATUS[letter![0]!] ?? 'modified', oldMode: oldMode!, newMode: newMode!, oldBlob: oldBlob!, newBlob: newBlob! });
  }
  return changes;
}

export async function diffFiles(checkpoints: CheckpointStore, store: GitStore, from: Side, to: Side): Promise<ChangedFile[]> {
  const deadline = Date.now() + 60_000;
  const [raw, patch] = await Promise.all([
    rawChanges(checkpoints, store, from.tree, to.tree, deadline),
    checkpoints.git(store, { args: ['diff-tree', '-r', '-p', '--no-renames', '--no-color', '--no-ext-diff', '--no-textconv', from.tree, to.tree], deadline }),
  ]);
  const blocks = splitPatch(patch.stdout);
  const files: ChangedFile[] = raw.map((change, i) => fileOf(change, blocks[i] ?? Buffer.alloc(0), patch.overflow && i >= blocks.length - 1));
  return mergeSkipped(files, from, to).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function countsOf(files: readonly ChangedFile[]): FileCounts {
  const counts: FileCounts = { added: 0, modified: 0, deleted: 0, additions: 0, deletions: 0 };
  for (const file of files) {
    counts[file.status] += 1;
    counts.additions += file.additions;
    counts.deletions += file.deletions;
  }
  return counts;
}

/** The patch of one diff-tree run, split at each `diff --git` header. */
function splitPatch(out: Buffer): Buffer[] {
  const blocks: Buffer[] = [];
  const header = Buffer.from('diff --git ');
  let start = out.indexOf(header);
  while (start !== -1) {
    const next = out.indexOf(Buffer.from('\ndiff --git '), start);
    blocks.push(out.subarray(start, next === -1 ? out.length : next + 1));
    start = next === -1 ? -1 : next + 1;
  }
  return blocks;
}

function fileOf(change: RawChange, block: Buffer, cut: boolean): ChangedFile {
  const text = block.toString('utf8');
  const hunks = text.indexOf('\n@@');
  const binary = hunks === -1 && /\nBinary files /.test(text);
  let additions = 0;
  let deletions = 0;
  if (hunks !== -1) {
    for (const line of text.slice(hunks + 1).split('\n')) {
      if (line.startsWith('+')) additions += 1;
      else if (line.startsWith('-')) deletions += 1;
    }
  }
  const base = { path: change.path, status: change.status, binary, additions, deletions };
  if (binary) return base;
  if (block.length <= PATCH_CAP_BYTES && !cut) return { ...base, patch: text };
  const kept = block.subarray(0, PATCH_CAP_BYTES);
  const end = kept.lastIndexOf(0x0a);
  return { ...base, patch: kept.subarray(0, end === -1 ? kept.length : end + 1).toString('utf8'), truncated: true };
}

/** Oversized files are in neither tree: they are listed from the checkpoints' `skipped` lists. */
function mergeSkipped(files: ChangedFile[], from: Side, to: Side): ChangedFile[] {
  const before = new Map(from.skipped.map((s) => [s.path, s.size]));
  const after = new Map(to.skipped.map((s) => [s.path, s.size]));
  const byPath = new Map(files.map((f) => [f.path, f]));
  const mark = (path: string, status: FileStatus): void => {
    byPath.set(path, { path, status, binary: false, additions: 0, deletions: 0, skipped: true });
  };
  for (const [path, size] of after) {
    if (before.get(path) === size) continue;
    const inTree = byPath.get(path);
    // In the tree before and too large now: the tree diff says deleted; it was modified.
    mark(path, before.has(path) || inTree?.status === 'deleted' ? 'modified' : 'added');
  }
  for (const path of before.keys()) {
    if (after.has(path)) continue;
    const inTree = byPath.get(path);
    mark(path, inTree?.status === 'added' ? 'modified' : 'deleted');
  }
  return [...byPath.values()];
}

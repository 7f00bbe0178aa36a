import type { FileHandle } from 'node:fs/promises';
import type { ChainLink } from '../transcripts/clia-chain.js';
import { forwardLines } from './lines.js';

/**
 * Where a log stands in its conversation tree (Claude Code's own records): the current leaf
 * and the line starts of the records off the current branch (abandoned by a rewind or an
 * edited prompt), which pages and counts skip. Empty `off` for a file without branches.
 */
export interface Branch {
  /** The newest main-chain record: the one a new record must follow to stay on the branch. */
  leaf?: string;
  off: Set<number>;
}

/**
 * Whether a record continues the branch (follows its leaf), updating the leaf; false at a
 * new branch (then the whole tree is read once: currentBranch). Records that are no links
 * (bookkeeping) and side-chain records leave the branch as it is.
 */
export function extend(branch: Branch, link: ChainLink | undefined): boolean {
  if (!link || link.side) return true;
  if (branch.leaf !== undefined && link.parent !== branch.leaf) return false;
  branch.leaf = link.uuid;
  return true;
}

/**
 * The current branch of the whole file, read once: the chain from the newest main-chain
 * record back through `parentUuid` (a compaction's logical parent) to its root. A parent
 * the file does not hold (a record of another file, an unknown shape) is taken to be the
 * record before it in the file: what cannot be placed in the tree keeps file order. Only the
 * links are held, for as long as the read takes.
 */
export async function currentBranch(fh: FileHandle, size: number, linkOf: (line: Buffer) => ChainLink | undefined): Promise<Branch> {
  const at = new Map<string, number>();
  const parents: Array<string | null> = [];
  const starts: number[] = [];
  let leaf: string | undefined;
  for await (const batch of forwardLines(fh, 0, size)) {
    for (const line of batch) {
      const link = linkOf(line.bytes);
      if (!link || link.side) continue;
      if (!at.has(link.uuid)) at.set(link.uuid, parents.length);
      parents.push(link.parent);
      starts.push(line.start);
      leaf = link.uuid;
    }
  }
  const on = new Uint8Array(parents.length);
  for (let i = parents.length - 1; i >= 0 && on[i] === 0; ) {
    on[i] = 1;
    const parent = parents[i]!;
    if (parent === null) break;
    i = at.get(parent) ?? i - 1;
  }
  const off = new Set<number>();
  for (let i = 0; i < parents.length; i++) if (on[i] === 0) off.add(starts[i]!);
  return { ...(leaf !== undefined ? { leaf } : {}), off };
}

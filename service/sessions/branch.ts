import type { FileHandle } from 'node:fs/promises';
import { onBranch, type ChainLink } from '../transcripts/clia-chain.js';
import { forwardLines } from './lines.js';

/**
 * Where a log stands in its conversation tree (Claude Code's own records): the current leaf
 * and the byte ranges of the records off the current branch (abandoned by a rewind or an
 * edited prompt), which pages and counts skip. An abandoned branch is a run of records, so a
 * few ranges, however long it is. Empty `off` for a file without branches.
 */
export interface Branch {
  /** The newest main-chain record: the one a new record must follow to stay on the branch. */
  leaf?: string;
  /** Sorted, disjoint ranges, flat: [start, end, start, end, ...]. */
  off: readonly number[];
}

/** Whether the line starting at `start` lies in one of the ranges off the branch. */
export function isOff(off: readonly number[], start: number): boolean {
  let lo = 0;
  let hi = off.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (start < off[2 * mid]!) hi = mid - 1;
    else if (start >= off[2 * mid + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
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
 * record back through `parentUuid` (a compaction's logical parent) to its root (onBranch).
 * Only the links are held, for as long as the read takes.
 */
export async function currentBranch(fh: FileHandle, size: number, linkOf: (line: Buffer) => ChainLink | undefined): Promise<Branch> {
  const links: ChainLink[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  for await (const batch of forwardLines(fh, 0, size)) {
    for (const line of batch) {
      const link = linkOf(line.bytes);
      if (!link || link.side) continue;
      links.push(link);
      starts.push(line.start);
      ends.push(line.end);
    }
  }
  const on = onBranch(links);
  const leaf = links.at(-1)?.uuid;
  // Runs of records off the branch, each one range (the lines between them are no records).
  const off: number[] = [];
  for (let i = 0; i < links.length; i++) {
    if (on[i] === 1) continue;
    if (i > 0 && on[i - 1] === 0) off[off.length - 1] = ends[i]!;
    else off.push(starts[i]!, ends[i]!);
  }
  return { ...(leaf !== undefined ? { leaf } : {}), off };
}

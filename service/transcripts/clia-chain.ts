import { isObject, str } from './common.js';
import { spanAt, startsWith } from './quick.js';

/**
 * One record of Claude Code's conversation tree (its own on-disk records): every chain
 * record has a `uuid` and the `parentUuid` it follows; a compaction boundary has
 * `parentUuid: null` and continues the chain through `logicalParentUuid`. A rewind or an
 * edited prompt starts a sibling branch: a new record whose parent is an earlier one.
 */
export interface ChainLink {
  uuid: string;
  /** The record this one follows (a compaction's logical parent); null at a root. */
  parent: string | null;
  /** A sub-agent's record written into the parent's file (older versions): not the main chain. */
  side: boolean;
}

const PARENT_FIRST = Buffer.from('{"parentUuid":');
const NULL = Buffer.from('null');
const LOGICAL = Buffer.from(',"logicalParentUuid":"');
const LOGICAL_ANYWHERE = Buffer.from('"logicalParentUuid":"');
const SIDE_TRUE = Buffer.from(',"isSidechain":true');
const SIDE_FALSE = Buffer.from(',"isSidechain":false');
const UUID = Buffer.from(',"uuid":"');
/** What follows the top-level `uuid` in every record the writer makes (2.1.330/332). */
const AFTER_UUID = [Buffer.from(',"timestamp":"'), Buffer.from(',"userType":"')];

/**
 * The link of a raw line, read from its bytes: the writer puts `parentUuid` first
 * (`{parentUuid, logicalParentUuid?, isSidechain, ...}`), and the top-level `uuid` before
 * `timestamp` (or `userType`). A quote inside a string is escaped, so these markers are
 * structure. A line of another shape is parsed; a line that is no chain record (bookkeeping,
 * the service's stream-json store) has none.
 */
export function cliaLink(line: Buffer): ChainLink | undefined {
  if (!startsWith(line, PARENT_FIRST, 0)) return undefined;
  let at = PARENT_FIRST.length;
  let parent: string | null;
  if (startsWith(line, NULL, at)) {
    parent = null;
    at += NULL.length;
    if (startsWith(line, LOGICAL, at)) {
      const span = spanAt(line, at + LOGICAL.length);
      if (!span) return parsed(line);
      parent = line.toString('latin1', span.start, span.end);
      at = span.end + 1;
    } else if (line.includes(LOGICAL_ANYWHERE)) return parsed(line);
  } else {
    const span = line[at] === 0x22 ? spanAt(line, at + 1) : undefined;
    if (!span) return parsed(line);
    parent = line.toString('latin1', span.start, span.end);
    at = span.end + 1;
  }
  const side = startsWith(line, SIDE_TRUE, at);
  if (!side && !startsWith(line, SIDE_FALSE, at)) return parsed(line);
  const uuid = topUuid(line, at);
  return uuid === undefined ? parsed(line) : { uuid, parent, side };
}

function topUuid(line: Buffer, from: number): string | undefined {
  for (let at = line.indexOf(UUID, from); at !== -1; at = line.indexOf(UUID, at + 1)) {
    const span = spanAt(line, at + UUID.length);
    if (span && AFTER_UUID.some((next) => startsWith(line, next, span.end + 1))) return line.toString('latin1', span.start, span.end);
  }
  return undefined;
}

function parsed(line: Buffer): ChainLink | undefined {
  try {
    return linkOf(JSON.parse(line.toString('utf8')));
  } catch {
    return undefined;
  }
}

/**
 * Which records are on the current branch: the chain from the newest record (the last of
 * `links`, main-chain records in file order) back through its parents to its root. A parent
 * not among them (a record of another file, an unknown shape) is taken to be the record
 * before: what cannot be placed keeps file order. 1 on the branch, 0 off it.
 */
export function onBranch(links: ReadonlyArray<Pick<ChainLink, 'uuid' | 'parent'>>): Uint8Array {
  const at = new Map<string, number>();
  links.forEach((link, i) => {
    if (!at.has(link.uuid)) at.set(link.uuid, i);
  });
  const on = new Uint8Array(links.length);
  for (let i = links.length - 1; i >= 0 && on[i] === 0; ) {
    on[i] = 1;
    const parent = links[i]!.parent;
    if (parent === null) break;
    i = at.get(parent) ?? i - 1;
  }
  return on;
}

/** A parsed record's link (records of the service's older clia record); none for bookkeeping. */
export function linkOf(record: unknown): ChainLink | undefined {
  if (!isObject(record) || !('parentUuid' in record)) return undefined;
  const uuid = str(record.uuid);
  if (!uuid) return undefined;
  const parent = str(record.parentUuid) ?? str(record.logicalParentUuid) ?? null;
  return { uuid, parent, side: record.isSidechain === true };
}

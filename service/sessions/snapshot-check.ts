import { readFileSync } from 'node:fs';
import { changedPaths, underRoots, type SavedKey } from './bulk-check.js';
import type { DirKey } from './dir-key.js';
import type { SessionRoots } from './layout.js';
import { DIR_KEYS, FILE_KEYS, ROLES, rootEntries, VERSION, type DirColumns, type FileColumns, type PartDoc } from './snapshot-format.js';

/** The bulk check of a saved snapshot, taken apart from its decode: which parts it read, and what changed in them. */
export interface SnapshotCheck {
  /** The parts whose keys were checked, by name, sorted. */
  parts: string[];
  changed: string[];
}

/**
 * Reads only what the bulk check needs of the snapshot (each part's paths, its files' keys and
 * its folders), then checks them against the disk: the check a restart makes after the
 * decode, made beside it (check-worker.ts). A part this reading does not take is left out of
 * `parts`; the caller believes the answer only for exactly the parts its decode took.
 */
export async function checkSnapshot(file: string, roots: SessionRoots): Promise<SnapshotCheck | undefined> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  if (parse<{ version?: number }>(lines[0]!)?.version !== VERSION) return undefined;
  const used = new Map<string, string>(rootEntries(roots));
  const under = underRoots(roots);
  const parts: string[] = [];
  const dirs = new Map<string, DirKey>();
  const files: Array<[string, SavedKey]> = [];
  for (const line of lines.slice(1)) {
    const doc = parse<Partial<PartDoc>>(line);
    const name = doc?.part;
    if (!doc || typeof name !== 'string' || used.get(name) !== doc.root || parts.includes(name)) continue;
    const keys = partKeys(doc);
    if (!keys) continue;
    parts.push(name);
    for (const [p, key] of keys.dirs) if (under(p)) dirs.set(p, key);
    for (const entry of keys.files) if (under(entry[0])) files.push(entry);
  }
  return { parts: parts.sort(), changed: await changedPaths(roots, dirs, files) };
}

/**
 * The changed paths of a check made beside the decode, when it checked exactly the parts the
 * decode took (the rule); undefined otherwise (the check is then made over what was taken back).
 */
export async function checkFor(check: Promise<SnapshotCheck | undefined> | undefined, parts: readonly string[]): Promise<string[] | undefined> {
  const made = await check;
  return made && made.parts.join('\0') === parts.join('\0') ? made.changed : undefined;
}

function parse<T>(line: string): T | undefined {
  try {
    return line ? (JSON.parse(line) as T) : undefined;
  } catch {
    return undefined;
  }
}

/** One part's folders and files' keys; undefined when a column is not what the format says. */
function partKeys(doc: Partial<PartDoc>): { dirs: Array<[string, DirKey]>; files: Array<[string, SavedKey]> } | undefined {
  const paths = doc.paths;
  const f = doc.files as Partial<FileColumns> | undefined;
  const d = doc.dirs as Partial<DirColumns> | undefined;
  if (!Array.isArray(paths) || !sameLengths(f, FILE_KEYS) || !sameLengths(d, DIR_KEYS)) return undefined;
  const files: Array<[string, SavedKey]> = [];
  for (let i = 0; i < f.path.length; i++) {
    const p = paths[f.path[i]!] as unknown;
    const key = { ino: f.ino[i]!, size: f.size[i]!, mtimeMs: f.mtimeMs[i]! };
    if (typeof p !== 'string' || typeof key.ino !== 'number' || typeof key.size !== 'number' || typeof key.mtimeMs !== 'number') return undefined;
    files.push([p, f.role[i] === ROLES.sqlite ? 'always' : key]);
  }
  const dirs: Array<[string, DirKey]> = [];
  for (let i = 0; i < d.path.length; i++) {
    const p = paths[d.path[i]!] as unknown;
    const key = { ino: d.ino[i]!, mtimeMs: d.mtimeMs[i]!, listedAt: d.listedAt[i]! };
    if (typeof p !== 'string' || typeof key.ino !== 'number' || typeof key.mtimeMs !== 'number' || typeof key.listedAt !== 'number') return undefined;
    dirs.push([p, key]);
  }
  return { dirs, files };
}

function sameLengths<T extends object>(c: Partial<T> | undefined, keys: ReadonlyArray<keyof T>): c is T {
  if (!c || typeof c !== 'object') return false;
  const first = c[keys[0]!];
  return Array.isArray(first) && keys.every((k) => Array.isArray(c[k]) && (c[k] as unknown[]).length === first.length);
}

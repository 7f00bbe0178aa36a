import { HttpError } from '../errors.js';
import type { SourceKind, SourceRecord } from './types.js';

/** The sources that are the user's terminal history, not a store of the service's own. */
export const TERMINAL_SOURCES: ReadonlySet<SourceKind> = new Set(['clia-home', 'clib-home', 'clia-kept', 'clib-kept', 'clib-zst']);

/** The programs' own files (a kept copy is the service's). */
const SOURCE_FILES: ReadonlySet<SourceKind> = new Set(['clia-home', 'clib-home', 'clib-zst']);

/** A terminal session whose program's file is gone, read from the service's kept copy. */
export function isRetained(records: readonly SourceRecord[]): boolean {
  return TERMINAL_SOURCES.has(records[0]!.source) && !records.some((r) => SOURCE_FILES.has(r.source));
}

export type Origin = 'space' | 'terminal';

/** A session is the terminal's when no store of the service's own knows it (its owner is a history record). */
export function originOf(owner: SourceRecord): Origin {
  return TERMINAL_SOURCES.has(owner.source) ? 'terminal' : 'space';
}

/**
 * A session the service ran is also in the program's own history, under the program's id
 * (Claude Code's session id, Codex's thread id), which the service's store keeps as
 * `nativeSessionId`. Its history records are given the service's id, so they fold into the
 * service's entry (which owns it, by precedence) rather than listing it twice. By id only:
 * records carry no mark of who ran them (`claude -p` from a terminal writes
 * `entrypoint: "sdk-cli"` as the service's runs do).
 */
export function foldTerminal(records: Iterable<SourceRecord>): Iterable<SourceRecord> {
  const list = Array.isArray(records) ? (records as SourceRecord[]) : [...records];
  const serviceIds = new Map<string, string>();
  for (const r of list) if (r.nativeId && r.nativeId !== r.id && !TERMINAL_SOURCES.has(r.source)) serviceIds.set(r.nativeId, r.id);
  if (serviceIds.size === 0) return list;
  return list.map((r) => {
    const id = TERMINAL_SOURCES.has(r.source) ? serviceIds.get(r.id) : undefined;
    return id ? { ...r, id } : r;
  });
}

/** `?origin=`: space or terminal, given once; absent: every session. */
export function parseOrigin(value: unknown): Origin | undefined {
  if (value === undefined) return undefined;
  if (value === 'space' || value === 'terminal') return value;
  throw new HttpError(400, 'origin must be space or terminal');
}

/** The views of one origin (all of them without a filter). */
export function ofOrigin<T extends { records: readonly SourceRecord[] }>(views: readonly T[], origin: Origin | undefined): readonly T[] {
  return origin === undefined ? views : views.filter((v) => originOf(v.records[0]!) === origin);
}

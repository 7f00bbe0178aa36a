import path from 'node:path';
import { entriesOf } from '../runtimes/cli-session-store.js';
import { AGENT_NAMES } from '../ids.js';
import { isObject, str } from '../transcripts/common.js';
import { indexEntries } from '../transcripts/runtimea-store.js';
import { STORE_AGENT, STORE_FORMAT, type StoreName } from './layout.js';
import type { SourceKind, SourceRecord } from './types.js';

/**
 * Index documents -> SourceRecords. Pure: the caller reads the file. Entries that are not
 * objects or have no string `sessionId` are skipped; an index that is not an object or
 * array has no entries.
 */
export function storeIndexRecords(store: StoreName, agentId: string, indexFile: string, doc: unknown): SourceRecord[] {
  const folder = path.dirname(indexFile);
  const source: SourceKind = store === 'runtimea' ? 'runtimea-file' : store;
  // OpenClaw keys its index by session key, not by id; the CLI stores key by id (or use an array).
  const values = store === 'runtimea' ? runtimeaEntries(doc) : entriesOf(doc);
  return values.map((entry) => ({
    id: entry.sessionId as string,
    source,
    agentName: STORE_AGENT[store],
    agentId,
    title: str(entry.title),
    updatedAtMs: epochMs(entry.updatedAt),
    directory: str(entry.directory),
    indexFile,
    log: { kind: 'file', format: STORE_FORMAT[store], path: path.join(folder, logName(entry)) },
    ...nativeOf(entry),
  }));
}

function nativeOf(entry: Record<string, unknown>): { nativeId?: string } {
  const id = str(entry.nativeSessionId);
  return id ? { nativeId: id } : {};
}

/** A log with no index entry (an index written later, or lost): still a session. */
export function orphanLogRecord(store: StoreName, agentId: string, file: string, id: string, mtimeMs: number): SourceRecord {
  return {
    id,
    source: store === 'runtimea' ? 'runtimea-file' : store,
    agentName: STORE_AGENT[store],
    agentId,
    updatedAtMs: mtimeMs,
    log: { kind: 'file', format: STORE_FORMAT[store], path: file },
  };
}

export function cliaRecordSource(agentId: string, id: string, file: string, doc: unknown): SourceRecord {
  const entry = isObject(doc) ? doc : {};
  return {
    id,
    source: 'clia-legacy',
    agentName: 'clia_code',
    agentId,
    title: str(entry.title),
    updatedAtMs: epochMs(entry.updatedAt),
    directory: str(entry.directory),
    indexFile: file,
    log: { kind: 'legacy', path: file },
  };
}

export function projectRecords(pid: string, indexFile: string, doc: unknown): SourceRecord[] {
  return entriesOf(doc).flatMap((entry) => {
    const agentName = AGENT_NAMES.find((n) => n === entry.agent_name);
    if (!agentName) return [];
    return [{ id: entry.sessionId, source: 'project' as const, agentName, agentId: pid, title: str(entry.title), updatedAtMs: epochMs(entry.updatedAt), directory: str(entry.directory), indexFile }];
  });
}

function runtimeaEntries(doc: unknown): Array<Record<string, unknown>> {
  return indexEntries(doc).map(([, entry]) => entry);
}

/** `sessionFile` is absolute in OpenClaw's index (and may name a topic file); only its name is used. */
function logName(entry: Record<string, unknown>): string {
  const file = str(entry.sessionFile);
  const base = file ? path.basename(file) : '';
  // basename again: an id is data, and must not walk out of the folder.
  return base.endsWith('.jsonl') && !base.startsWith('.') ? base : path.basename(`${String(entry.sessionId)}.jsonl`);
}

/** Epoch ms from epoch ms, epoch seconds (< 1e11) or an ISO string. */
export function epochMs(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value < 1e11 ? value * 1000 : value;
  if (typeof value === 'string' && value) {
    const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
    return Number.isFinite(n) && n > 0 ? (n < 1e11 ? n * 1000 : n) : undefined;
  }
  return undefined;
}

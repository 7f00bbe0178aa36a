import { HttpError } from '../errors.js';
import { CliSessionStore, entriesOf } from '../runtimes/cli-session-store.js';
import type { AgentName } from '../runtimes/runtime.js';
import { TERMINAL_AGENT_ID } from '../runtimes/terminal-session.js';
import { originOf } from './fold.js';
import { JsonFile } from '../stores/json-file.js';
import { isObject } from '../transcripts/common.js';
import type { SessionIndex } from './session-index.js';
import type { SourceRecord } from './types.js';

/** Directory history kept per session (spec). */
export const HISTORY_LIMIT = 200;

const MISSING = Symbol('missing');

class NotInIndex extends Error {}

/**
 * PATCH /api/sessions/{id}: the first writable index that has the session, in the spec's
 * order (runtimea file index, clia index, clib index), gets {directory, selectedAt} appended
 * to directoryHistory (last 200 kept), `directory` and `updatedAt`. The write is a locked
 * read-merge-write (JsonFile.update) with the chat writers of that file, atomic, and keeps
 * the file's form. The runtimea SQLite store and the clia legacy record are never written:
 * a session known only there is updated in its per-project index entry when one exists,
 * else 409. No index file is ever created.
 */
export async function patchDirectory(index: SessionIndex, id: string, directory: string): Promise<void> {
  const view = await index.get(id);
  if (!view) throw new HttpError(404, 'Session not found');
  const now = Date.now();
  for (const record of view.records) {
    if (!record.indexFile || !writable(record)) continue;
    if (await updateEntry(record, id, directory, now)) {
      await index.markDirty([record.indexFile]);
      return;
    }
  }
  const readOnly = view.records.find((r) => !writable(r));
  if (readOnly) throw new HttpError(409, readOnlyDetail(readOnly));
  // A terminal session: the directory goes to its entry in the service's own store, never into the program's files.
  if (originOf(view.records[0]!) === 'terminal') return patchTerminal(index, view.id, view.agentName, directory, now);
  throw new HttpError(404, 'Session not found');
}

async function patchTerminal(index: SessionIndex, id: string, agentName: AgentName, directory: string, now: number): Promise<void> {
  const store = agentName === 'clib' ? new CliSessionStore(index.roots.clib, 'clib') : new CliSessionStore(index.roots.clia, 'clia_code');
  await store.upsert(TERMINAL_AGENT_ID, id, { directory, directoryHistory: [{ directory, selectedAt: now }], updatedAt: now, nativeSessionId: id });
  await index.markDirty([store.indexFile(TERMINAL_AGENT_ID)]);
}

function writable(record: SourceRecord): boolean {
  return record.source !== 'runtimea-sqlite' && record.source !== 'clia-legacy';
}

function readOnlyDetail(record: SourceRecord): string {
  return record.source === 'runtimea-sqlite'
    ? 'Session is kept in the runtimea database, which only the runtime writes, and no project index lists it; its directory cannot be changed'
    : 'Session is a read-only legacy clia record and no project index lists it; its directory cannot be changed';
}

/** True when the entry was found and written; false when the file or the entry is gone. */
async function updateEntry(record: SourceRecord, id: string, directory: string, now: number): Promise<boolean> {
  const file = new JsonFile<unknown>(record.indexFile!, () => MISSING);
  try {
    return await file.update((current) => {
      const entry = current === MISSING ? undefined : findEntry(current, id, record.source === 'runtimea-file');
      if (!entry) throw new NotInIndex();
      const history = Array.isArray(entry.directoryHistory) ? entry.directoryHistory : [];
      entry.directoryHistory = [...history, { directory, selectedAt: now }].slice(-HISTORY_LIMIT);
      entry.directory = directory;
      entry.updatedAt = typeof entry.updatedAt === 'string' ? new Date(now).toISOString() : now;
      return { next: current, result: true };
    });
  } catch (err) {
    if (err instanceof NotInIndex) return false;
    throw err;
  }
}

/** OpenClaw keys its index by session key; the other indexes by id (or are arrays). */
function findEntry(doc: unknown, id: string, bySessionKey: boolean): Record<string, unknown> | undefined {
  if (bySessionKey) return isObject(doc) ? Object.values(doc).find((e): e is Record<string, unknown> => isObject(e) && e.sessionId === id) : undefined;
  return entriesOf(doc).find((e) => e.sessionId === id);
}

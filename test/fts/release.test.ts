import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../service/fts/protocol.js';
import { FtsReader } from '../../service/fts/search.js';
import { FtsStore, freshCursor, type DocRow } from '../../service/fts/store.js';

/**
 * The indexing worker gives its connection's page cache back each time its queue drains
 * (FtsStore.releaseMemory, SQLite's shrink_memory): what was written stays found, writes go
 * on after it, and a release during an open batch leaves the batch alone.
 */
let dir: string;
beforeAll(async () => (dir = await mkdtemp(path.join(os.tmpdir(), 'fts-release-'))));
afterAll(() => rm(dir, { recursive: true, force: true }));

type IndexJob = Extract<Job, { action: 'index' }>;
const job = (sessionId: string): IndexJob => ({ action: 'index', sessionId, log: { kind: 'file', format: 'clia', path: `/logs/${sessionId}.jsonl` } as IndexJob['log'], logKey: `file:clia:/logs/${sessionId}.jsonl`, agentName: 'clia', agentId: 'alpha', updatedAtMs: 1, urgent: false });
const docs = (words: string[]): DocRow[] => words.map((body, i) => ({ kind: 'text', body, toolName: null, messageIndex: i, messageId: `m${i}`, role: 'user', timestamp: '2026-11-20T12:00:00.000Z' }));
const ids = (reader: FtsReader, word: string) => reader.search(`"${word}"`, 100, 0, false).rows.map((r) => [r.sessionId, r.messageIndex]);

/** Writes one session's documents in a batch of its own (as the worker does). */
function index(store: FtsStore, sessionId: string, words: string[]): void {
  store.begin();
  const row = store.create(job(sessionId));
  store.append(row, docs(words), { ...freshCursor(), messages: words.length }, null);
  store.commit();
}

describe('FtsStore.releaseMemory', () => {
  it('keeps every answer: what was indexed before is found after, and indexing goes on', () => {
    const file = path.join(dir, 'a', 'index.sqlite');
    const store = FtsStore.open(file);
    const reader = new FtsReader(file);
    try {
      index(store, 's1', Array.from({ length: 2000 }, (_, i) => `quokka number${i} ${'filler '.repeat(40)}`));
      const before = ids(reader, 'quokka');
      expect(before).toHaveLength(100);
      store.releaseMemory();
      expect(ids(reader, 'quokka')).toEqual(before);
      expect(store.row('s1')).toMatchObject({ documents: 2000, messages: 2000 });
      index(store, 's2', ['numbat after the release']);
      expect(ids(reader, 'numbat')).toEqual([['s2', 0]]);
      store.releaseMemory();
      expect(store.states().map((s) => [s.sessionId, s.documents])).toEqual([
        ['s1', 2000],
        ['s2', 1],
      ]);
    } finally {
      reader.close();
      store.close();
    }
  });

  it('during an open batch it does nothing: the batch commits whole, or rolls back whole', () => {
    const file = path.join(dir, 'b', 'index.sqlite');
    const store = FtsStore.open(file);
    const reader = new FtsReader(file);
    try {
      store.begin();
      const row = store.create(job('s1'));
      store.append(row, docs(['wallaby in a batch']), { ...freshCursor(), messages: 1 }, null);
      store.releaseMemory();
      expect(store.inTransaction).toBe(true);
      expect(ids(reader, 'wallaby')).toEqual([]);
      store.commit();
      expect(ids(reader, 'wallaby')).toEqual([['s1', 0]]);
    } finally {
      reader.close();
      store.close();
    }
  });
});

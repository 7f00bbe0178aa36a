import { readFile, stat } from './disk.js';
import { cliaRecordMessages } from '../transcripts/clia-record.js';
import { fileKey, sameKey, type FileKey } from './file-key.js';
import type { Page } from './file-log.js';
import type { LogEntry, Message } from './types.js';

/** A clia record larger than this is not read (its messages count as none). */
const MAX_CLIA_RECORD_BYTES = 64 * 1024 * 1024;

interface Parsed {
  key: FileKey;
  entries: LogEntry[];
}

/** The clia records (`kind: 'legacy'` logs): one small JSON document each, parsed whole and cached by key. */
export class CliaRecordLogs {
  private readonly cache = new Map<string, Parsed>();

  cachedCount(file: string, key: FileKey): number | undefined {
    const parsed = this.cache.get(file);
    return parsed && sameKey(parsed.key, key) ? countMessages(parsed.entries) : undefined;
  }

  async entries(file: string): Promise<LogEntry[]> {
    const key = fileKey(await stat(file));
    const cached = this.cache.get(file);
    if (cached && sameKey(cached.key, key)) return cached.entries;
    let entries: LogEntry[] = [];
    if (key.size <= MAX_CLIA_RECORD_BYTES) {
      try {
        entries = cliaRecordMessages(JSON.parse(await readFile(file, 'utf8')), new Date(key.mtimeMs).toISOString());
      } catch {
        entries = [];
      }
    }
    this.cache.set(file, { key, entries });
    return entries;
  }

  async count(file: string): Promise<number> {
    return countMessages(await this.entries(file));
  }

  async page(file: string, offset: number, limit: number): Promise<Page> {
    const messages = (await this.entries(file)).flatMap((e): Message[] => (e.kind === 'message' ? [e.message] : []));
    const total = messages.length;
    const start = offset === -1 ? Math.max(0, total - limit) : offset;
    return { total, offset: start, messages: messages.slice(start, Math.min(total, start + limit)) };
  }

  forget(file: string): void {
    this.cache.delete(file);
  }
}

function countMessages(entries: LogEntry[]): number {
  let n = 0;
  for (const e of entries) if (e.kind === 'message') n++;
  return n;
}

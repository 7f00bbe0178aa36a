import { readFile, stat } from './disk.js';
import { fileKey, sameKey, type FileKey } from './file-key.js';
import { FORMATS } from '../transcripts/formats.js';
import { newerTitle, USER_NAMED, type ProgramTitle } from '../transcripts/clia-title.js';
import type { LogFormat } from './types.js';

/** The program's own title among the lines of `buf` (a log's head or tail): the best, newest among equals. Pure. */
export function titleIn(buf: Buffer, format: LogFormat): ProgramTitle | undefined {
  const of = FORMATS[format].title;
  if (!of) return undefined;
  let best: ProgramTitle | undefined;
  for (let start = 0; start < buf.length; ) {
    let nl = buf.indexOf(0x0a, start);
    if (nl === -1) nl = buf.length;
    best = newerTitle(best, of(buf.subarray(start, nl)));
    start = nl + 1;
  }
  return best;
}

/** Longest `session_index.jsonl` read (one short line per named thread). */
const MAX_NAMES_BYTES = 16 * 1024 * 1024;

/**
 * Codex's thread names: `<codex home>/session_index.jsonl`, one `{id, thread_name}` line per
 * naming, the newest line of an id winning. Read whole once, and again only when its inode,
 * size or mtime changed (one stat per titles pass).
 */
export class CodexNames {
  private file: string | undefined;
  private key: FileKey | undefined;
  private names = new Map<string, string>();

  /** `file`: the index file of the Codex home read now (none while history reading is off). */
  async refresh(file: string | undefined): Promise<void> {
    const st = file ? await stat(file).catch(() => undefined) : undefined;
    if (!file || !st || !st.isFile() || st.size > MAX_NAMES_BYTES) {
      this.key = undefined;
      this.names = new Map();
      return;
    }
    const key = fileKey(st);
    if (this.file === file && this.key && sameKey(this.key, key)) return;
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) return;
    this.names = namesIn(text);
    this.file = file;
    this.key = key;
  }

  title(threadId: string): ProgramTitle | undefined {
    const text = this.names.get(threadId);
    return text ? { text, rank: USER_NAMED } : undefined;
  }
}

/** Each thread's newest name among the lines (a blank name clears it). Pure. */
export function namesIn(text: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as { id?: unknown; thread_name?: unknown };
      if (typeof v.id !== 'string') continue;
      const name = typeof v.thread_name === 'string' ? v.thread_name.trim() : '';
      if (name) names.set(v.id.toLowerCase(), name);
      else names.delete(v.id.toLowerCase());
    } catch {
      // a half-written last line: the next read has it whole
    }
  }
  return names;
}

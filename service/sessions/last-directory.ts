import { compressedTail, isCompressed } from './compressed-lines.js';
import { open } from './disk.js';
import { FORMATS } from '../transcripts/formats.js';
import type { LogFormat, LogRef } from './types.js';

/** How far back from a log's end a resume looks for its last working directory. */
const RESUME_TAIL_BYTES = 4 * 1024 * 1024;
/** How far back the listing looks (read when a terminal log is first seen and when it grows). */
export const LISTING_TAIL_BYTES = 64 * 1024;
const CWD = Buffer.from('"cwd":"');

/**
 * The last working directory a terminal history log states (Claude Code: every record's
 * `cwd`; Codex: each `turn_context`): where the user last ran it, the session's `directory`,
 * and where a resume runs (the user may `cd` mid-session).
 */
export async function lastDirectory(log: LogRef, tailBytes = RESUME_TAIL_BYTES): Promise<string | undefined> {
  if (log.kind !== 'file') return undefined;
  return lastDirectoryOf(log.path, log.format, tailBytes);
}

export async function lastDirectoryOf(file: string, format: LogFormat, tailBytes: number): Promise<string | undefined> {
  if (!FORMATS[format].directory) return undefined;
  return lastDirectoryIn(await tailOf(file, tailBytes), format);
}

/** A file's last `tailBytes` (its first line may be cut). */
export async function tailOf(file: string, tailBytes: number): Promise<Buffer> {
  if (isCompressed(file)) return compressedTail(file, tailBytes);
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const start = Math.max(0, size - tailBytes);
    const buf = Buffer.alloc(size - start);
    await fh.read(buf, 0, buf.length, start);
    return buf;
  } finally {
    await fh.close();
  }
}

/** The last directory stated among the lines of `buf` (a cut first line is skipped). Pure. */
export function lastDirectoryIn(buf: Buffer, format: LogFormat): string | undefined {
  const of = FORMATS[format].directory;
  if (!of) return undefined;
  let end = buf.length;
  while (end > 0) {
    const nl = buf.lastIndexOf(0x0a, end - 1);
    const line = buf.subarray(nl + 1, end);
    end = nl === -1 ? 0 : nl;
    if (line.indexOf(CWD) === -1) continue;
    try {
      const dir = of(JSON.parse(line.toString('utf8')));
      if (dir) return dir;
    } catch {
      // a cut first line or a damaged one: look further back
    }
  }
  return undefined;
}

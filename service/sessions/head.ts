import { open } from './disk.js';
import { lineEntries } from './line-entries.js';
import { forwardLines } from './lines.js';
import { firstUserText } from '../transcripts/title.js';
import { FORMATS } from '../transcripts/formats.js';
import type { ProgramTitle } from '../transcripts/clia-title.js';
import type { LogFormat } from './types.js';

/** How far into a log the first prompt is looked for. */
export const HEAD_BYTES = 1024 * 1024;
/** What the start-up build reads of each log at first (enough for every recorded format). */
export const QUICK_HEAD_BYTES = 64 * 1024;

export interface Head {
  /** The first user prompt, when found. */
  prompt?: string;
  /** The working directory the log's records state before that prompt (terminal history: the session's). */
  directory?: string;
  /** The program's own title (Claude Code's title records, Codex's thread name), from the head and tail reads. */
  title?: ProgramTitle;
  /** False while the log is shorter than HEAD_BYTES and has no prompt yet: read again when it grows. */
  final: boolean;
}

/** The first prompt among the complete lines of `bytes` (a log's beginning). Pure. */
export function promptIn(bytes: Buffer, format: LogFormat): string | undefined {
  return headIn(bytes, format).prompt;
}

/** The first prompt, and the directory stated before it, among the complete lines of `bytes`. Pure. */
export function headIn(bytes: Buffer, format: LogFormat): Omit<Head, 'final'> {
  let start = 0;
  let directory: string | undefined;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl === -1) return directory ? { directory } : {};
    const line = bytes.subarray(start, nl);
    directory ??= directoryIn(line, format);
    const prompt = firstUserText(lineEntries(format, line, true, { position: start, fallbackTime: '' }));
    if (prompt !== undefined) return { prompt, ...(directory ? { directory } : {}) };
    start = nl + 1;
  }
}

const CWD = Buffer.from('"cwd":"');

/** The directory a line states, for formats that state one (only lines that name a cwd are parsed again). */
function directoryIn(line: Buffer, format: LogFormat): string | undefined {
  const of = FORMATS[format].directory;
  if (!of || line.indexOf(CWD) === -1) return undefined;
  try {
    return of(JSON.parse(line.toString('utf8')));
  } catch {
    return undefined;
  }
}

/** Reads a log's beginning, up to its first user message (never the whole log). */
export async function readHead(file: string, format: LogFormat): Promise<Head> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const to = Math.min(size, HEAD_BYTES);
    let directory: string | undefined;
    const stated = (): { directory?: string } => (directory ? { directory } : {});
    for await (const batch of forwardLines(fh, 0, to)) {
      for (const line of batch) {
        directory ??= directoryIn(line.bytes, format);
        const prompt = firstUserText(lineEntries(format, line.bytes, true, { position: line.start, fallbackTime: '' }));
        if (prompt !== undefined) return { prompt, final: true, ...stated() };
      }
    }
    return { final: size >= HEAD_BYTES, ...stated() };
  } finally {
    await fh.close();
  }
}

import { open } from './disk.js';
import { lineEntries } from './line-entries.js';
import { forwardLines } from './lines.js';
import { firstUserText, titleSource } from '../transcripts/title.js';
import { FORMATS } from '../transcripts/formats.js';
import type { ProgramTitle } from '../transcripts/clia-title.js';
import type { LogFormat } from './types.js';

/** How far into a log the first prompt is looked for. */
export const HEAD_BYTES = 1024 * 1024;
/** What is read first of each terminal log (terminal-head-sync.ts): Claude Code's first prompt is within it. */
export const QUICK_HEAD_BYTES = 64 * 1024;
/**
 * How far a log is read for its first prompt before reading up to HEAD_BYTES: a Codex 0.169
 * rollout states about 90 KB of instructions and tools before it (session_meta, developer
 * messages), and reading 1 MB of each of thousands of rollouts was most of a first start.
 */
export const NEAR_HEAD_BYTES = 256 * 1024;

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
    const prompt = promptOf(line, start, format);
    if (prompt !== undefined) return { prompt, ...(directory ? { directory } : {}) };
    start = nl + 1;
  }
}

const CWD = Buffer.from('"cwd":"');

/** A line's user prompt; a line its format's peek is sure holds no message is not parsed (a rollout's instructions, events). */
function promptOf(line: Buffer, position: number, format: LogFormat): string | undefined {
  if (FORMATS[format].peek(line)?.length === 0) return undefined;
  // Kept for its title: 20,000 whole first prompts held a few tens of MB for nothing.
  return titleSource(firstUserText(lineEntries(format, line, true, { position, fallbackTime: '' })));
}

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
    // The near part first; the rest up to HEAD_BYTES only for a log whose prompt is further.
    const near = await headBetween(fh, format, Math.min(size, NEAR_HEAD_BYTES));
    if (near.prompt !== undefined || size <= NEAR_HEAD_BYTES) return { ...near, final: near.prompt !== undefined || size >= HEAD_BYTES };
    const far = await headBetween(fh, format, Math.min(size, HEAD_BYTES));
    return { ...far, final: far.prompt !== undefined || size >= HEAD_BYTES };
  } finally {
    await fh.close();
  }
}

/** The first prompt and the directory stated before it, among the lines of a log's first `to` bytes. */
async function headBetween(fh: Awaited<ReturnType<typeof open>>, format: LogFormat, to: number): Promise<Omit<Head, 'final'>> {
  let directory: string | undefined;
  const stated = (): { directory?: string } => (directory ? { directory } : {});
  for await (const batch of forwardLines(fh, 0, to)) {
    for (const line of batch) {
      directory ??= directoryIn(line.bytes, format);
      const prompt = promptOf(line.bytes, line.start, format);
      if (prompt !== undefined) return { prompt, ...stated() };
    }
  }
  return stated();
}

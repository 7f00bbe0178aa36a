import { open } from './disk.js';
import { lineEntries } from './line-entries.js';
import { forwardLines } from './lines.js';
import { firstUserText } from '../transcripts/title.js';
import type { LogFormat } from './types.js';

/** How far into a log the first prompt is looked for. */
export const HEAD_BYTES = 1024 * 1024;
/** What the start-up build reads of each log at first (enough for every recorded format). */
export const QUICK_HEAD_BYTES = 64 * 1024;

export interface Head {
  /** The first user prompt, when found. */
  prompt?: string;
  /** False while the log is shorter than HEAD_BYTES and has no prompt yet: read again when it grows. */
  final: boolean;
}

/** The first prompt among the complete lines of `bytes` (a log's beginning). Pure. */
export function promptIn(bytes: Buffer, format: LogFormat): string | undefined {
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl === -1) return undefined;
    const prompt = firstUserText(lineEntries(format, bytes.subarray(start, nl), true, { position: start, fallbackTime: '' }));
    if (prompt !== undefined) return prompt;
    start = nl + 1;
  }
}

/** Reads a log's beginning, up to its first user message (never the whole log). */
export async function readHead(file: string, format: LogFormat): Promise<Head> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const to = Math.min(size, HEAD_BYTES);
    for await (const batch of forwardLines(fh, 0, to)) {
      for (const line of batch) {
        const prompt = firstUserText(lineEntries(format, line.bytes, true, { position: line.start, fallbackTime: '' }));
        if (prompt !== undefined) return { prompt, final: true };
      }
    }
    return { final: size >= HEAD_BYTES };
  } finally {
    await fh.close();
  }
}

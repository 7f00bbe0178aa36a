import { open } from './disk.js';
import { lineEntries } from './line-entries.js';
import { forwardLines } from './lines.js';
import { firstUserText } from './title.js';
import type { LogFormat } from './types.js';

/** How far into a log the first prompt is looked for. */
export const HEAD_BYTES = 1024 * 1024;

export interface Head {
  /** The first user prompt, when found. */
  prompt?: string;
  /** False while the log is shorter than HEAD_BYTES and has no prompt yet: read again when it grows. */
  final: boolean;
}

/** Reads a log's beginning, up to its first user message (never the whole log). */
export async function readHead(file: string, format: LogFormat): Promise<Head> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const to = Math.min(size, HEAD_BYTES);
    for await (const line of forwardLines(fh, 0, to)) {
      const prompt = firstUserText(lineEntries(format, line.bytes, true, { position: line.start, fallbackTime: '' }));
      if (prompt !== undefined) return { prompt, final: true };
    }
    return { final: size >= HEAD_BYTES };
  } finally {
    await fh.close();
  }
}

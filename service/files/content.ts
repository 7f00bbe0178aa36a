import { HttpError } from '../errors.js';
import { openRegularFile } from './regular-file.js';

/**
 * POST /api/files/content reads a whole file into one JSON string, so it is capped;
 * larger files are for content-binary, which streams.
 */
export const TEXT_LIMIT_BYTES = 10 * 1024 * 1024;

export interface TextContent {
  content: string;
  path: string;
}

/** The file as UTF-8 text, invalid bytes replaced by U+FFFD (a BOM is kept, as a character). */
export async function readText(home: string, real: string, limit = TEXT_LIMIT_BYTES): Promise<TextContent> {
  const { handle, stats } = await openRegularFile(home, real);
  try {
    if (stats.size > limit) throw tooLarge(limit);
    // Read at most limit + 1 bytes whatever stat said: the file may be growing.
    const buffer = Buffer.alloc(Math.min(stats.size, limit) + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === buffer.length) {
        if (filled > limit) throw tooLarge(limit);
        break;
      }
    }
    return { content: buffer.toString('utf8', 0, filled), path: real };
  } finally {
    await handle.close();
  }
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, `File exceeds ${limit / (1024 * 1024)} MB text limit; use /api/files/content-binary`);
}

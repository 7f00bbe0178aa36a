import path from 'node:path';
import { Readable } from 'node:stream';
import mime from 'mime-types';
import { openRegularFile } from './regular-file.js';

/** The spec's download chunk size. */
export const BINARY_CHUNK_BYTES = 64 * 1024;

export interface BinaryFile {
  name: string;
  size: number;
  mimeType: string;
  /** Exactly `size` bytes; it owns the file handle and closes it when done or destroyed. */
  stream: Readable;
}

/** Opens a file for POST /api/files/content-binary. */
export async function openBinary(home: string, real: string): Promise<BinaryFile> {
  const { handle, stats } = await openRegularFile(home, real);
  const name = path.basename(real);
  const mimeType = mime.lookup(name) || 'application/octet-stream';
  if (stats.size === 0) {
    await handle.close();
    return { name, size: 0, mimeType, stream: Readable.from([]) };
  }
  // Bounded to the size announced in Content-Length, even if the file grows meanwhile.
  const stream = handle.createReadStream({ start: 0, end: stats.size - 1, highWaterMark: BINARY_CHUNK_BYTES });
  return { name, size: stats.size, mimeType, stream };
}

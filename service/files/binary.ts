import path from 'node:path';
import { Readable } from 'node:stream';
import mime from 'mime-types';
import { openRegularFile } from './regular-file.js';

/** The spec's download chunk size. */
export const BINARY_CHUNK_BYTES = 64 * 1024;

/**
 * Sent with every download: were a download ever rendered (a renderer navigating to it, a
 * browser ignoring `attachment`), it runs in an opaque origin with nothing allowed.
 */
export const DOWNLOAD_CSP = "sandbox; default-src 'none'";

/** Types a browser would run script in (documents, SVG, XML, scripts): served as opaque bytes. */
const ACTIVE_TYPE = /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|[a-z]+\/[^;]*\+xml|text\/xsl|(text|application)\/(x-)?(java|ecma)script)$/i;

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
  const mimeType = downloadType(name);
  if (stats.size === 0) {
    await handle.close();
    return { name, size: 0, mimeType, stream: Readable.from([]) };
  }
  // Bounded to the size announced in Content-Length, even if the file grows meanwhile.
  const stream = handle.createReadStream({ start: 0, end: stats.size - 1, highWaterMark: BINARY_CHUNK_BYTES });
  return { name, size: stats.size, mimeType, stream };
}

/** The type from the extension (spec), except that active types become application/octet-stream. */
function downloadType(name: string): string {
  const guessed = mime.lookup(name) || 'application/octet-stream';
  return ACTIVE_TYPE.test(guessed) ? 'application/octet-stream' : guessed;
}

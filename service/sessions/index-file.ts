import { open } from './disk.js';
import type { FileKey } from './file-key.js';

/** An index file over this is not read (no store writes one near it). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/**
 * Index files this large are read one at a time: each is a Buffer of its size while it is read
 * (OpenClaw's index of 1,500 sessions is 23 MB; four agents read at once held about 100 MB more
 * at a first start's peak).
 */
const BIG_INDEX_BYTES = 4 * 1024 * 1024;
let bigIndexTurn: Promise<unknown> = Promise.resolve();

/** A file's bytes as JSON. */
export function parseJson(bytes: Buffer): unknown {
  return JSON.parse(bytes.toString('utf8'));
}

/** An index file's JSON (`parse` may read its bytes another way); undefined when too big, half-written or not JSON. */
export async function readJson(file: string, key: FileKey, parse: (bytes: Buffer) => unknown = parseJson): Promise<unknown> {
  if (key.size > MAX_INDEX_BYTES) return undefined;
  if (key.size < BIG_INDEX_BYTES) return readParsed(file, parse);
  const turn = bigIndexTurn.then(() => readParsed(file, parse));
  bigIndexTurn = turn;
  return turn;
}

async function readParsed(file: string, parse: (bytes: Buffer) => unknown): Promise<unknown> {
  try {
    return parse(await readBytes(file));
  } catch {
    // Half-written by a writer that is not atomic, or not JSON: keep what was read before.
    return undefined;
  }
}

/**
 * The file's bytes, in one Buffer outside V8's heap (freed at the next scavenge), for the parser
 * to decode what it needs: `readFile(file, 'utf8')` decodes a big file in 512 KB strings joined
 * as it reads, and the first search flattens them into a copy: twice the file in V8's old space,
 * which only a full collection gives back (a first start's four 23 MB OpenClaw indexes took the
 * main heap from 44 to 211 MB before one ran).
 */
async function readBytes(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const buffer = Buffer.allocUnsafeSlow(size > MAPPED_FROM ? Math.max(size, OVER_DYNAMIC_MMAP) : size);
    let filled = 0;
    for (let n = -1; n !== 0 && filled < size; filled += n) n = (await fh.read(buffer, filled, size - filled, filled)).bytesRead;
    return buffer.subarray(0, filled);
  } finally {
    await fh.close();
  }
}

/**
 * A big file's buffer is made larger than glibc's top for its dynamic mmap threshold (32 MB):
 * freeing a mapped block of 128 KB to 32 MB raises the threshold to its size (and the heap's
 * trim threshold to twice that), so that every later allocation below it (a read's 1 MB chunks,
 * a worker's buffers) came from the heap, which is then not given back: a first start's four
 * 23 MB OpenClaw indexes kept tens of MB resident when idle. Only the pages read are resident.
 */
const OVER_DYNAMIC_MMAP = 33 * 1024 * 1024;
/** glibc's first mmap threshold: smaller blocks come from the heap and change nothing. */
const MAPPED_FROM = 128 * 1024;

import { readBytes } from './disk.js';
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

import { createHash, randomBytes } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** Bytes gathered before one writev: few syscalls, little memory. */
const BATCH_BYTES = 1024 * 1024;
/** Writes in flight at once (on libuv's thread pool) while the next batch gathers. */
const MAX_WRITES = 2;

/** The hidden temp file of an upload in progress (the start-up sweep knows this name). */
export const UPLOAD_TEMP_NAME = /^\.upload-[0-9a-f]{16}\.part$/;

export interface SunkFile {
  temp: string;
  size: number;
  hash: string;
}

/**
 * Where an upload's bytes go. Each piece is hashed as it comes and kept as is (no copy:
 * the network buffers themselves), and every megabyte goes to a hidden temp file in one
 * positional writev on the thread pool while the next one gathers. Data may arrive before
 * the temp file exists (its folder is still being resolved); it waits. When a batch is
 * ready but MAX_WRITES writes are in flight, `push` says so and the caller pauses the
 * request until `whenWritable` calls back, so memory stays at a few megabytes.
 */
export class UploadSink {
  /** Bytes pushed so far. */
  size = 0;
  private readonly hash = createHash('sha256');
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Where the next write starts. */
  private position = 0;
  private readonly writes = new Set<Promise<void>>();
  private file: { handle: FileHandle; temp: string } | undefined;
  private opening: Promise<void> | undefined;
  private aborting: Promise<void> | undefined;
  /** The body is in: the last, partial batch goes too. */
  private ending = false;
  private failure: Error | undefined;
  private waiter: (() => void) | undefined;

  constructor(private readonly onFailure: (err: Error) => void) {}

  /** Creates the temp file in `dir`; bytes pushed before are written from then on. */
  open(dir: string): Promise<void> {
    this.opening = (async () => {
      const temp = path.join(dir, `.upload-${randomBytes(8).toString('hex')}.part`);
      if (this.aborting) return;
      const handle = await open(temp, 'wx');
      this.file = { handle, temp };
      if (!this.aborting) this.flush();
    })();
    return this.opening;
  }

  /** Takes `data` (kept by reference: it must not change). False: pause the source until `whenWritable`. */
  push(data: Buffer): boolean {
    this.size += data.length;
    this.hash.update(data);
    this.pending.push(data);
    this.pendingBytes += data.length;
    this.flush();
    return !this.blocked();
  }

  /** Calls `resume` once `push` would take more. */
  whenWritable(resume: () => void): void {
    this.waiter = resume;
  }

  /** Every byte written and fsynced, the temp file closed: its name, size and sha256. */
  async finish(): Promise<SunkFile> {
    await this.opening;
    this.ending = true;
    this.flush();
    // Each write that ends starts the next, so this ends with everything written or a failure.
    while (this.writes.size > 0) await Promise.all(this.writes);
    if (this.failure) throw this.failure;
    if (this.pendingBytes > 0) throw new Error('upload: bytes left unwritten');
    const { handle, temp } = this.file!;
    await handle.sync();
    await handle.close();
    this.file = undefined;
    return { temp, size: this.size, hash: this.hash.digest('hex') };
  }

  /** Stops writing and removes the temp file; safe to call more than once, and before `open` ends. */
  abort(): Promise<void> {
    return (this.aborting ??= (async () => {
      await this.opening?.catch(() => undefined);
      while (this.writes.size > 0) await Promise.all(this.writes);
      if (!this.file) return;
      await this.file.handle.close().catch(() => undefined);
      await unlink(this.file.temp).catch(() => undefined);
      this.file = undefined;
    })());
  }

  /** More than a batch waits and no write can start: the source should wait. */
  private blocked(): boolean {
    return this.pendingBytes >= BATCH_BYTES && (!this.file || this.writes.size >= MAX_WRITES);
  }

  /** Starts writes of gathered batches (of the remainder too once ending), as far as allowed. */
  private flush(): void {
    while (this.file && !this.aborting && !this.failure && this.writes.size < MAX_WRITES && (this.pendingBytes >= BATCH_BYTES || (this.ending && this.pendingBytes > 0))) {
      const buffers = this.pending;
      const length = this.pendingBytes;
      this.pending = [];
      this.pendingBytes = 0;
      const write: Promise<void> = writeAll(this.file.handle, buffers, length, this.position).then(
        (): void => this.written(write),
        (err: unknown): void => this.fail(err as Error, write),
      );
      this.position += length;
      this.writes.add(write);
    }
  }

  private written(write: Promise<void>): void {
    this.writes.delete(write);
    this.flush();
    if (!this.blocked() && this.waiter) {
      const resume = this.waiter;
      this.waiter = undefined;
      resume();
    }
  }

  private fail(err: Error, write: Promise<void>): void {
    this.writes.delete(write);
    if (this.failure) return;
    this.failure = err;
    this.onFailure(err);
  }
}

/** One positional writev of `buffers`, looping on short writes (a full disk fails on the next one). */
async function writeAll(handle: FileHandle, buffers: Buffer[], length: number, position: number): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesWritten } = await handle.writev(done === 0 ? buffers : remainder(buffers, done), position + done);
    if (bytesWritten <= 0) throw Object.assign(new Error('EIO: short write, write'), { code: 'EIO' });
    done += bytesWritten;
  }
}

/** `buffers` without their first `skip` bytes. */
function remainder(buffers: Buffer[], skip: number): Buffer[] {
  const out: Buffer[] = [];
  for (const buffer of buffers) {
    if (skip >= buffer.length) skip -= buffer.length;
    else {
      out.push(skip > 0 ? buffer.subarray(skip) : buffer);
      skip = 0;
    }
  }
  return out;
}

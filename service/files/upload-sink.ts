import { randomBytes } from 'node:crypto';
import { writev as writevCallback } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { OffThreadSha256 } from './sha256-thread.js';

const writev = promisify(writevCallback);

/** Bytes gathered before one writev: few syscalls, little memory. */
const BATCH_BYTES = 1024 * 1024;
/** Writes in flight at once (on libuv's thread pool) while the next batch gathers. */
const MAX_WRITES = 2;
/** Written bytes at most on their way through the hashing thread before the source waits. */
const MAX_HASHING_BYTES = 6 * BATCH_BYTES;
/**
 * Written bytes after which a background fdatasync starts, so the disk writes back while
 * the upload goes on and the final fsync has little left to do.
 */
const SYNC_EVERY_BYTES = 4 * BATCH_BYTES;

/** The hidden temp file of an upload in progress (the start-up sweep knows this name). */
export const UPLOAD_TEMP_NAME = /^\.upload-[0-9a-f]{16}\.part$/;

export interface SunkFile {
  temp: string;
  size: number;
  hash: string;
}

/** One writev's worth of pieces, in upload order. */
interface Batch {
  buffers: Buffer[];
  length: number;
  written: boolean;
}

/**
 * Where an upload's bytes go. Pieces are kept as they come (no copy: the network buffers
 * themselves), and every megabyte goes to a hidden temp file in one positional writev on
 * the thread pool while the next one gathers; once written, in order, the batch moves to
 * the hashing thread (sha256-thread.ts). Data may arrive before the temp file exists (its
 * folder is still being resolved); it waits. When a batch is ready but the writes or the
 * hashing are full, `push` says so and the caller pauses the request until `whenWritable`
 * calls back, so memory stays at a few megabytes.
 */
export class UploadSink {
  /** Bytes pushed so far. */
  size = 0;
  private readonly hash = new OffThreadSha256();
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Where the next write starts. */
  private position = 0;
  private readonly writes = new Set<Promise<void>>();
  /** Batches being written or waiting for an earlier one before they go to be hashed. */
  private readonly unhashed: Batch[] = [];
  private hashingBytes = 0;
  /** Bytes written so far, and as of the start of the last background sync. */
  private writtenBytes = 0;
  private syncedBytes = 0;
  private syncing: Promise<void> | undefined;
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

  /**
   * Takes `data`, kept by reference and later moved to the hashing thread: nobody may read
   * or change it afterwards. False: pause the source until `whenWritable`.
   */
  push(data: Buffer): boolean {
    this.size += data.length;
    this.pending.push(data);
    this.pendingBytes += data.length;
    this.flush();
    return !this.blocked();
  }

  /** Calls `resume` once `push` would take more. */
  whenWritable(resume: () => void): void {
    this.waiter = resume;
  }

  /** Every byte written, hashed and fsynced, the temp file closed: its name, size and sha256. */
  async finish(): Promise<SunkFile> {
    await this.opening;
    this.ending = true;
    this.flush();
    // Each write that ends starts the next, so this ends with everything written or a failure.
    while (this.writes.size > 0) await Promise.all(this.writes);
    if (this.failure) throw this.failure;
    if (this.pendingBytes > 0 || this.unhashed.length > 0) throw new Error('upload: bytes left unwritten');
    const hash = await this.hash.digest(); // answered after every batch sent before it
    await this.syncing;
    // A failure meanwhile (a background sync) has the upload aborted, its file with it.
    if (this.failure || !this.file) throw this.failure ?? new Error('upload: aborted');
    const { handle, temp } = this.file;
    await handle.sync();
    await handle.close();
    this.file = undefined;
    return { temp, size: this.size, hash };
  }

  /** Stops writing and removes the temp file; safe to call more than once, and before `open` ends. */
  abort(): Promise<void> {
    return (this.aborting ??= (async () => {
      this.hash.drop();
      await this.opening?.catch(() => undefined);
      while (this.writes.size > 0) await Promise.all(this.writes);
      await this.syncing;
      if (!this.file) return;
      await this.file.handle.close().catch(() => undefined);
      await unlink(this.file.temp).catch(() => undefined);
      this.file = undefined;
    })());
  }

  /** More than a batch waits and no write can start, or the hashing is behind: the source should wait. */
  private blocked(): boolean {
    if (this.pendingBytes < BATCH_BYTES) return false;
    return !this.file || this.writes.size >= MAX_WRITES || this.hashingBytes >= MAX_HASHING_BYTES;
  }

  /** Starts writes of gathered batches (of the remainder too once ending), as far as allowed. */
  private flush(): void {
    while (this.file && !this.aborting && !this.failure && this.writes.size < MAX_WRITES && (this.pendingBytes >= BATCH_BYTES || (this.ending && this.pendingBytes > 0))) {
      const batch: Batch = { buffers: this.pending, length: this.pendingBytes, written: false };
      this.pending = [];
      this.pendingBytes = 0;
      this.unhashed.push(batch);
      const write: Promise<void> = writeAll(this.file.handle, batch.buffers, batch.length, this.position).then(
        (): void => this.written(write, batch),
        (err: unknown): void => this.fail(err as Error, write),
      );
      this.position += batch.length;
      this.writes.add(write);
    }
  }

  private written(write: Promise<void>, batch: Batch): void {
    this.writes.delete(write);
    batch.written = true;
    this.writtenBytes += batch.length;
    this.hashWritten();
    this.syncInBackground();
    this.flush();
    this.wake();
  }

  /** Sends the written batches at the head of the line to be hashed, in upload order. */
  private hashWritten(): void {
    while (this.unhashed[0]?.written) {
      const batch = this.unhashed.shift()!;
      this.hashingBytes += batch.length;
      this.hash.update(batch.buffers).then(
        () => {
          this.hashingBytes -= batch.length;
          this.wake();
        },
        (err: unknown) => this.fail(err as Error),
      );
    }
  }

  private syncInBackground(): void {
    if (this.syncing || !this.file || this.writtenBytes - this.syncedBytes < SYNC_EVERY_BYTES) return;
    this.syncedBytes = this.writtenBytes;
    this.syncing = this.file.handle.datasync().then(
      () => void (this.syncing = undefined),
      (err: unknown) => {
        this.syncing = undefined;
        this.fail(err as Error);
      },
    );
  }

  private wake(): void {
    if (this.blocked() || !this.waiter) return;
    const resume = this.waiter;
    this.waiter = undefined;
    resume();
  }

  private fail(err: Error, write?: Promise<void>): void {
    if (write) this.writes.delete(write);
    if (this.failure) return;
    this.failure = err;
    this.onFailure(err);
  }
}

/**
 * One positional writev of `buffers`, looping on short writes (a full disk fails on the next
 * one). The callback API on the handle's descriptor: FileHandle.writev costs the event loop
 * several times more per call, and the event loop is what an upload waits on.
 */
async function writeAll(handle: FileHandle, buffers: Buffer[], length: number, position: number): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesWritten } = await writev(handle.fd, done === 0 ? buffers : remainder(buffers, done), position + done);
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

import { randomBytes } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { hashWriter, type HashWriteJob } from './hash-writer.js';

/** Write batches: big enough that a message per batch costs nothing, few enough that memory stays flat. */
const BATCH_BYTES = 1024 * 1024;
const BATCHES = 4;

/** The hidden temp file of an upload in progress (the start-up sweep knows this name). */
export const UPLOAD_TEMP_NAME = /^\.upload-[0-9a-f]{16}\.part$/;

export interface SunkFile {
  temp: string;
  size: number;
  hash: string;
}

/**
 * Where an upload's bytes go: copied into a few fixed shared batches, which the hash-writer thread
 * hashes and writes into a hidden temp file while the next batch fills. Data may arrive
 * before the temp file exists (its folder is still being resolved); it waits in the
 * batches. When every batch is taken, `push` says so and the caller pauses the request
 * until `whenWritable` calls back, so memory stays at BATCHES x BATCH_BYTES.
 */
export class UploadSink {
  /** Bytes pushed so far. */
  size = 0;
  private readonly memory = Array.from({ length: BATCHES }, () => new SharedArrayBuffer(BATCH_BYTES));
  private readonly batches = this.memory.map((shared) => Buffer.from(shared));
  /** Numbers of the batches free to fill. */
  private readonly free: number[] = this.batches.map((_, i) => i);
  private filling: number | undefined;
  private filled = 0;
  private readonly ready: Array<{ batch: number; length: number }> = [];
  /** Bytes that came while every batch was taken (at most one network chunk: the caller pauses). */
  private readonly overflow: Buffer[] = [];
  private job: HashWriteJob | undefined;
  private file: { handle: FileHandle; temp: string } | undefined;
  private opening: Promise<void> | undefined;
  private aborting: Promise<void> | undefined;
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
      if (this.aborting) return; // abort() waits for this open, then removes the file
      this.job = hashWriter().start(handle.fd, this.memory, { returned: (batch) => this.returned(batch), failed: (err) => this.fail(err) });
      this.pump();
    })();
    return this.opening;
  }

  /** Copies `data` in. False: every batch is taken, pause the source until `whenWritable`. */
  push(data: Buffer): boolean {
    this.size += data.length;
    this.fill(data);
    this.pump();
    return !this.blocked();
  }

  /** Calls `resume` once `push` would take more. */
  whenWritable(resume: () => void): void {
    this.waiter = resume;
  }

  /** Every byte written and fsynced, the temp file closed: its name, size and sha256. */
  async finish(): Promise<SunkFile> {
    await this.opening;
    while (this.overflow.length > 0 && !this.failure) await new Promise<void>((resolve) => (this.waiter = resolve));
    if (this.filling !== undefined && this.filled > 0) this.ready.push({ batch: this.filling, length: this.filled });
    this.filling = undefined;
    this.pump();
    const { handle, temp } = this.file!;
    const hash = await this.job!.finish().catch((err: unknown) => {
      throw this.failure ?? err;
    });
    if (this.failure) throw this.failure;
    await handle.sync();
    await handle.close();
    this.file = undefined;
    return { temp, size: this.size, hash };
  }

  /** Stops writing and removes the temp file; safe to call more than once, and before `open` ends. */
  abort(): Promise<void> {
    return (this.aborting ??= (async () => {
      await this.opening?.catch(() => undefined);
      await this.job?.abort();
      if (!this.file) return;
      await this.file.handle.close().catch(() => undefined);
      await unlink(this.file.temp).catch(() => undefined);
      this.file = undefined;
    })());
  }

  /** Copies into the batch being filled, taking free batches as it goes; the rest overflows. */
  private fill(data: Buffer): void {
    let offset = 0;
    while (offset < data.length) {
      if (this.filling === undefined) {
        this.filling = this.free.pop();
        this.filled = 0;
        if (this.filling === undefined) break;
      }
      const n = data.copy(this.batches[this.filling]!, this.filled, offset);
      this.filled += n;
      offset += n;
      if (this.filled === BATCH_BYTES) {
        this.ready.push({ batch: this.filling, length: BATCH_BYTES });
        this.filling = undefined;
      }
    }
    if (offset < data.length) this.overflow.push(Buffer.from(data.subarray(offset)));
  }

  private blocked(): boolean {
    return this.overflow.length > 0 || (this.filling === undefined && this.free.length === 0);
  }

  private pump(): void {
    if (!this.job || this.aborting) return;
    for (let next = this.ready.shift(); next; next = this.ready.shift()) this.job.write(next.batch, next.length);
  }

  private returned(batch: number): void {
    this.free.push(batch);
    const pending = this.overflow.splice(0);
    for (const data of pending) this.fill(data);
    this.pump();
    if (!this.blocked() && this.waiter) {
      const resume = this.waiter;
      this.waiter = undefined;
      resume();
    }
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.waiter?.();
    this.onFailure(err);
  }
}

import { Worker } from 'node:worker_threads';

/**
 * One worker thread that hashes (sha256) and writes the batches of every upload, so the
 * event loop only parses and copies: with hashing on it, an upload ran at 35-45 % of disk
 * speed and `GET /` waited behind it. An upload's batches are SharedArrayBuffers both
 * threads see, so a message names a batch and a length, and no buffer is copied or
 * transferred (transfers made V8 count a megabyte of new external memory each time, and
 * collect garbage for it). Each upload is a job: its batches are hashed and written (pwrite,
 * short writes looped) in order; after a failed write a job writes nothing more and says why.
 * The thread is started on the first upload and kept (unref'd); if it dies, the jobs in
 * flight fail and the next upload starts a new one.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { writeSync } = require('node:fs');
const jobs = new Map();
parentPort.on('message', (m) => {
  const job = jobs.get(m.id);
  if (m.op === 'start') {
    jobs.set(m.id, { fd: m.fd, batches: m.batches.map((b) => new Uint8Array(b)), hash: createHash('sha256'), position: 0, failed: false });
  } else if (m.op === 'write') {
    if (job && !job.failed) {
      const bytes = job.batches[m.batch].subarray(0, m.length);
      try {
        job.hash.update(bytes);
        for (let done = 0; done < m.length; ) {
          const n = writeSync(job.fd, bytes, done, m.length - done, job.position + done);
          if (n <= 0) throw Object.assign(new Error('EIO: short write, write'), { code: 'EIO' });
          done += n;
        }
        job.position += m.length;
      } catch (err) {
        job.failed = true;
        parentPort.postMessage({ id: m.id, op: 'failed', message: String(err.message), code: err.code });
      }
    }
    parentPort.postMessage({ id: m.id, op: 'returned', batch: m.batch });
  } else if (m.op === 'finish') {
    jobs.delete(m.id);
    parentPort.postMessage({ id: m.id, op: 'finished', hash: job && !job.failed ? job.hash.digest('hex') : undefined });
  } else if (m.op === 'abort') {
    jobs.delete(m.id);
    parentPort.postMessage({ id: m.id, op: 'aborted' });
  }
});
`;

export interface JobListener {
  /** Batch number `batch` is hashed and written: it may be refilled. */
  returned(batch: number): void;
  /** A write failed (ENOSPC, EFBIG, ...); nothing more is written for this job. */
  failed(err: Error): void;
}

export interface HashWriteJob {
  /** Hands the first `length` bytes of batch number `batch` over; it must not change until `returned`. */
  write(batch: number, length: number): void;
  /** The sha256 (hex) of everything written, once every batch is down. */
  finish(): Promise<string>;
  /** Stops the job; resolves once the thread will not touch the file again. */
  abort(): Promise<void>;
}

type Reply =
  | { id: number; op: 'returned'; batch: number }
  | { id: number; op: 'failed'; message: string; code?: string }
  | { id: number; op: 'finished'; hash?: string }
  | { id: number; op: 'aborted' };

interface JobState {
  listener: JobListener;
  settle?: (reply: Reply) => void;
}

class HashWriterThread {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true });
  private readonly jobs = new Map<number, JobState>();
  private nextId = 1;

  constructor(private readonly onExit: (thread: HashWriterThread) => void) {
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => this.receive(reply));
    this.worker.on('error', (err) => this.stop(err));
    this.worker.on('exit', () => this.stop(new Error('upload writer thread stopped')));
  }

  /** Starts hashing and writing into the open file `fd` from position 0, out of `batches`. */
  start(fd: number, batches: readonly SharedArrayBuffer[], listener: JobListener): HashWriteJob {
    const id = this.nextId++;
    const state: JobState = { listener };
    this.jobs.set(id, state);
    this.worker.postMessage({ op: 'start', id, fd, batches });
    const ask = (op: 'finish' | 'abort'): Promise<Reply> =>
      new Promise((resolve) => {
        // A job already settled, or cut off by the thread's end, gets no more replies.
        if (!this.jobs.has(id)) return resolve({ id, op: 'failed', message: 'upload writer thread stopped' });
        state.settle = resolve;
        this.worker.postMessage({ op, id });
      });
    return {
      write: (batch, length) => this.worker.postMessage({ op: 'write', id, batch, length }),
      finish: async () => {
        const reply = await ask('finish');
        if (reply.op === 'finished' && reply.hash) return reply.hash;
        throw reply.op === 'failed' ? toError(reply) : new Error('upload write failed');
      },
      abort: async () => {
        await ask('abort');
      },
    };
  }

  private receive(reply: Reply): void {
    const state = this.jobs.get(reply.id);
    if (!state) return;
    if (reply.op === 'returned') return state.listener.returned(reply.batch);
    if (reply.op === 'failed') return state.listener.failed(toError(reply));
    this.jobs.delete(reply.id);
    state.settle?.(reply);
  }

  /** The thread is gone: every job in flight fails, and the next upload starts a new thread. */
  private stop(err: Error): void {
    this.onExit(this);
    for (const [id, state] of this.jobs) {
      state.listener.failed(err);
      state.settle?.({ id, op: 'failed', message: err.message });
    }
    this.jobs.clear();
  }
}

function toError(reply: { message: string; code?: string }): Error {
  return Object.assign(new Error(reply.message), reply.code ? { code: reply.code } : {});
}

let thread: HashWriterThread | undefined;

/** The shared hash-and-write thread, started on first use. */
export function hashWriter(): HashWriterThread {
  return (thread ??= new HashWriterThread((stopped) => {
    if (thread === stopped) thread = undefined;
  }));
}

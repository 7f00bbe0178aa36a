import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../process/worker-thread.js';

/** Memory of one piece to hash: [buffer, byte offset, byte length]. */
export type Piece = [memory: ArrayBuffer, offset: number, length: number];

export type HashRequest =
  | { job: number; kind: 'update'; pieces: Piece[] }
  | { job: number; kind: 'digest' }
  | { job: number; kind: 'drop' };

export type HashReply = { job: number; kind: 'updated' } | { job: number; kind: 'digest'; hex: string };

/**
 * Smaller pieces may sit in Node's shared Buffer pool (Buffer.allocUnsafe pools sizes
 * below half of Buffer.poolSize): they are copied, never moved.
 */
const POOLED_BELOW = Buffer.poolSize >>> 1;

/**
 * Whether a piece's memory may be moved: not pooled, and the piece is most of it (Node's
 * HTTP parser gives each body chunk memory of its own; a piece that is a small part of a
 * larger block is copied, in case that block is shared).
 */
function movable(piece: Buffer): boolean {
  return piece.length >= POOLED_BELOW && piece.length * 2 >= piece.buffer.byteLength;
}

interface Waiter {
  resolve(reply: HashReply): void;
  reject(err: Error): void;
}

/**
 * One thread, shared by every upload, that computes their sha256 beside the event loop.
 * sha256 is the largest cost of an upload (about 0.5-0.9 ms per MB on one core), so it runs
 * here while the event loop reads the network and the thread pool writes the disk. Started
 * at the first upload, it never keeps the process alive; if it dies, the uploads it was
 * hashing fail, and the next upload starts a new one.
 */
class HashThread {
  private worker: Worker | undefined;
  /** Replies expected, per job, in the order the requests went (a worker answers in order). */
  private readonly waiting = new Map<number, Waiter[]>();
  private lastJob = 0;

  newJob(): number {
    return ++this.lastJob;
  }

  /** Sends `request`, moving `transfer` to the thread; resolves with its reply. */
  ask(request: HashRequest, transfer: ArrayBuffer[]): Promise<HashReply> {
    const worker = this.running();
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(request.job) ?? [];
      queue.push({ resolve, reject });
      this.waiting.set(request.job, queue);
      worker.postMessage(request, transfer);
    });
  }

  /** Sends a request that has no reply (replies to earlier ones still come, in order). */
  tell(request: HashRequest): void {
    this.worker?.postMessage(request);
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorkerThread(import.meta.url, 'sha256-worker');
    worker.unref();
    worker.on('message', (reply: HashReply) => this.answer(reply));
    worker.on('error', (err) => this.lost(worker, err));
    worker.on('exit', (code) => this.lost(worker, new Error(`upload hashing thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private answer(reply: HashReply): void {
    const queue = this.waiting.get(reply.job);
    const waiter = queue?.shift();
    if (queue?.length === 0) this.waiting.delete(reply.job);
    waiter?.resolve(reply);
  }

  /** The thread is gone: every job it held fails (their bytes went with it). */
  private lost(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const queues = [...this.waiting.values()];
    this.waiting.clear();
    for (const waiter of queues.flat()) waiter.reject(err);
  }
}

const thread = new HashThread();

/**
 * A sha256 computed on the hashing thread. `update` moves the memory of its pieces there
 * (afterwards they read as empty here), so only pieces nobody will read again may be
 * given: the upload's network chunks, once written to disk.
 */
export class OffThreadSha256 {
  private readonly job = thread.newJob();

  /** Resolves once the pieces are hashed (the caller bounds the memory in flight with it). */
  async update(pieces: Buffer[]): Promise<void> {
    const moved: Piece[] = [];
    const transfer = new Set<ArrayBuffer>();
    for (const piece of pieces) {
      if (piece.length === 0) continue;
      const own = movable(piece) ? piece : new Uint8Array(piece);
      if (own.buffer.byteLength === 0) throw new Error('sha256: a piece was moved already');
      moved.push([own.buffer as ArrayBuffer, own.byteOffset, own.length]);
      transfer.add(own.buffer as ArrayBuffer);
    }
    await thread.ask({ job: this.job, kind: 'update', pieces: moved }, [...transfer]);
  }

  /** The hex digest of every piece given, once all are hashed. */
  async digest(): Promise<string> {
    const reply = await thread.ask({ job: this.job, kind: 'digest' }, []);
    return reply.kind === 'digest' ? reply.hex : '';
  }

  /** Forgets the job (an aborted upload). */
  drop(): void {
    thread.tell({ job: this.job, kind: 'drop' });
  }
}

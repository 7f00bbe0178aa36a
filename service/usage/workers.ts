import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../log.js';
import { startWorkerThread } from '../process/worker-thread.js';
import type { BatchRequest, BatchResult } from './scan-batch.js';

/**
 * Scan workers for the cold pass: up to one per core (at most 4), started on first use and
 * ended after a minute idle, never keeping the process alive. Batches go to whichever worker
 * is free. A worker that cannot start or dies fails its batch; the caller then reads those
 * logs in-process (and so does every later scan: `broken`).
 */
const IDLE_MS = 60_000;
const MAX_WORKERS = 4;

interface Slot {
  worker: Worker;
  busy: boolean;
}

export class ScanWorkers {
  private readonly slots: Slot[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 0;
  broken = false;

  constructor(
    private readonly log: Logger,
    readonly size = Math.max(1, Math.min(MAX_WORKERS, os.availableParallelism())),
  ) {}

  /** Runs every batch; results in batch order. Rejects when a worker fails. */
  async run(batches: BatchRequest[]): Promise<BatchResult[][]> {
    clearTimeout(this.idleTimer);
    const results: BatchResult[][] = new Array(batches.length);
    let next = 0;
    const drive = async (): Promise<void> => {
      while (next < batches.length) {
        const i = next++;
        results[i] = await this.send(batches[i]!);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.size, batches.length) }, drive));
    } catch (err) {
      this.broken = true;
      this.log.warn({ err: String(err) }, 'usage scan worker failed; scanning in-process');
      await this.close();
      throw err;
    }
    this.idleTimer = setTimeout(() => void this.close(), IDLE_MS);
    this.idleTimer.unref();
    return results;
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private async send(request: BatchRequest): Promise<BatchResult[]> {
    const slot = this.slots.find((s) => !s.busy) ?? this.spawn();
    slot.busy = true;
    const id = this.nextId++;
    try {
      return await new Promise<BatchResult[]>((resolve, reject) => {
        const onMessage = (m: { id: number; results: BatchResult[] }): void => {
          if (m.id !== id) return;
          cleanup();
          resolve(m.results);
        };
        const onError = (err: Error): void => {
          cleanup();
          reject(err);
        };
        const onExit = (code: number): void => {
          cleanup();
          reject(new Error(`scan worker exited with ${code}`));
        };
        const cleanup = (): void => {
          slot.worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        };
        slot.worker.on('message', onMessage).on('error', onError).on('exit', onExit);
        slot.worker.postMessage({ id, request });
      });
    } finally {
      slot.busy = false;
    }
  }

  private spawn(): Slot {
    const worker = startWorkerThread(import.meta.url, 'scan-worker');
    worker.unref();
    const slot = { worker, busy: false };
    this.slots.push(slot);
    return slot;
  }
}


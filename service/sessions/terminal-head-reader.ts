import type { Worker } from 'node:worker_threads';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { startWorkerThread } from '../process/worker-thread.js';
import type { Head } from './head.js';
import { headBuffer, readTerminalHeadSync } from './terminal-head-sync.js';
import type { LogFormat } from './types.js';

/** A log to read: its path and format. */
export type HeadJob = [path: string, format: LogFormat];
/** To the worker: logs to read after those sent before (`read`), or before them (`first`). */
export interface HeadRequest {
  read?: HeadJob[];
  first?: HeadJob[];
}
/** From the worker: heads read (null: the log is gone). */
export interface HeadReply {
  heads: Array<[path: string, head: Head | null]>;
}

/** The worker ends after this long with nothing to read (it never keeps the process alive). */
const IDLE_MS = 10_000;
const WORKER_YOUNG_MB = 4;
/** Logs read per turn of the event loop when no worker can run (the fallback, in-process). */
const SLICE = 32;

type Waiter = { format: LogFormat; take: (head: Head | undefined) => void };

/**
 * Reads terminal history logs' heads (terminal-head-sync.ts) on a worker thread: a first start
 * over 20,000 logs spent minutes of its main thread in these reads (each a cold disk read),
 * and every request waited behind them (docs/history.md). Heads come back in batches as they
 * are read; a read marked `now` (a page's own sessions) goes before what is queued. A worker
 * that cannot start or dies leaves its logs, and every later one, read in-process in slices.
 */
export class TerminalHeadReader {
  private worker: Worker | undefined;
  private readonly waiting = new Map<string, Waiter[]>();
  /** Logs sent as `first` and not read yet (asked again, they are not sent again). */
  private readonly urgent = new Set<string>();
  private idleTimer: NodeJS.Timeout | undefined;
  private broken = false;

  /** `foreground`: the process's foreground passes, during which the worker reads only a page's own logs. */
  constructor(private readonly foreground?: SharedArrayBuffer) {}

  /** Reads the heads of `jobs`, each handed to `take` as it comes (undefined: gone); resolves once all came. */
  read(jobs: readonly HeadJob[], take: (path: string, head: Head | undefined) => void, now = false): Promise<void> {
    if (jobs.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let left = jobs.length;
      for (const [file, format] of jobs) {
        const waiter: Waiter = {
          format,
          take: (head) => {
            take(file, head);
            if (--left === 0) resolve();
          },
        };
        const same = this.waiting.get(file);
        if (same) same.push(waiter);
        else this.waiting.set(file, [waiter]);
      }
      if (!now) return this.send({ read: [...jobs] });
      const first = jobs.filter(([file]) => !this.urgent.has(file));
      for (const [file] of first) this.urgent.add(file);
      if (first.length > 0) this.send({ first });
    });
  }

  close(): void {
    clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
  }

  private send(request: HeadRequest): void {
    clearTimeout(this.idleTimer);
    const worker = this.broken ? undefined : (this.worker ?? this.start());
    if (worker) worker.postMessage(request);
    else void this.readHere([...(request.first ?? []), ...(request.read ?? [])]);
  }

  private start(): Worker | undefined {
    let worker: Worker;
    try {
      // Its garbage is small and short-lived (a head's strings): a small young generation keeps it resident small.
      worker = startWorkerThread(import.meta.url, 'terminal-head-worker', { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB }, workerData: { foreground: this.foreground } });
    } catch {
      this.broken = true;
      return undefined;
    }
    worker.unref();
    worker.on('message', (reply: HeadReply) => this.took(reply));
    const fail = (): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.broken = true;
      // What it was sent and did not answer is read here.
      void this.readHere([...this.waiting].map(([file, waiters]) => [file, waiters[0]!.format]));
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    this.worker = worker;
    return worker;
  }

  private took(reply: HeadReply): void {
    for (const [file, head] of reply.heads) this.give(file, head ?? undefined);
    if (this.waiting.size === 0) {
      this.idleTimer = setTimeout(() => this.close(), IDLE_MS);
      this.idleTimer.unref();
    }
  }

  /** The head of `file` to everyone waiting for it. */
  private give(file: string, head: Head | undefined): void {
    const waiters = this.waiting.get(file);
    if (!waiters) return;
    this.waiting.delete(file);
    this.urgent.delete(file);
    for (const w of waiters) w.take(head);
  }

  /** The fallback: the same reads on this thread, a slice per turn of the event loop. */
  private async readHere(jobs: HeadJob[]): Promise<void> {
    const buffer = headBuffer();
    for (let i = 0; i < jobs.length; i += SLICE) {
      for (const [file, format] of jobs.slice(i, i + SLICE)) if (this.waiting.has(file)) this.give(file, readTerminalHeadSync(file, format, buffer));
      await yieldToEvents();
    }
  }
}

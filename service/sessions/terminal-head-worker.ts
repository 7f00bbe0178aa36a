import { parentPort, workerData } from 'node:worker_threads';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { foregroundRunning, whenNoForeground } from '../process/foreground.js';
import { headBuffer, readTerminalHeadSync } from './terminal-head-sync.js';
import type { HeadReply, HeadRequest, HeadJob } from './terminal-head-reader.js';

/**
 * The terminal heads worker's entry (terminal-head-reader.ts): reads the logs it is sent, in
 * order, and posts their heads in small batches; logs sent as `first` (a page's own) are read
 * before the rest. Between batches it lets messages in, so a page's logs never wait for more
 * than one batch; while a foreground pass runs, only they are read.
 */
const BATCH_MS = 50;
const BATCH_MAX = 64;
/** While paused, how often a page's own logs are looked for. */
const PAUSE_POLL_MS = 25;
/** The longest pause at a time: the titles pass is delayed, never starved (a usage pass is foreground for tens of seconds). */
const PAUSE_MAX_MS = 5000;

/**
 * The process's foreground passes (process/foreground.ts): while one runs (a count a page waits
 * for, the usage report's first pass), only a page's own logs are read. On two cores, the titles
 * pass's reads took the core a 2 GB rollout's count needed, and the first page waited longer.
 */
const foreground = (workerData as { foreground?: SharedArrayBuffer } | undefined)?.foreground;
let pausedSince = 0;

function paused(): boolean {
  if (!foreground || !foregroundRunning(foreground)) return (pausedSince = 0), false;
  pausedSince ||= Date.now();
  return Date.now() - pausedSince < PAUSE_MAX_MS;
}

const buffer = headBuffer();
const first: HeadJob[] = [];
const queue: HeadJob[] = [];
let next = 0;
let running = false;

parentPort?.on('message', (message: HeadRequest) => {
  if (message.first) first.push(...message.first);
  if (message.read) for (const job of message.read) queue.push(job);
  if (!running) void drain();
});

async function drain(): Promise<void> {
  running = true;
  try {
    for (;;) {
      const heads: HeadReply['heads'] = [];
      const started = Date.now();
      while (heads.length < BATCH_MAX && Date.now() - started < BATCH_MS) {
        const job = first.shift() ?? (paused() ? undefined : queue[next++]);
        if (!job) break;
        const [file, format] = job;
        heads.push([file, readTerminalHeadSync(file, format, buffer) ?? null]);
      }
      if (next >= queue.length) {
        queue.length = 0;
        next = 0;
      }
      if (heads.length > 0) parentPort!.postMessage({ heads } satisfies HeadReply);
      else if (next < queue.length && foreground) await whenNoForeground(foreground, PAUSE_POLL_MS);
      else return;
      await yieldToEvents();
    }
  } finally {
    running = false;
  }
}

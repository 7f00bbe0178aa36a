import { parentPort } from 'node:worker_threads';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { headBuffer, readTerminalHeadSync } from './terminal-head-sync.js';
import type { HeadReply, HeadRequest, HeadJob } from './terminal-head-reader.js';

/**
 * The terminal heads worker's entry (terminal-head-reader.ts): reads the logs it is sent, in
 * order, and posts their heads in small batches; logs sent as `first` (a page's own) are read
 * before the rest. Between batches it lets messages in, so a page's logs never wait for more
 * than one batch.
 */
const BATCH_MS = 50;
const BATCH_MAX = 64;

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
        const job = first.shift() ?? queue[next++];
        if (!job) break;
        const [file, format] = job;
        heads.push([file, readTerminalHeadSync(file, format, buffer) ?? null]);
      }
      if (next >= queue.length) {
        queue.length = 0;
        next = 0;
      }
      if (heads.length === 0) return;
      parentPort!.postMessage({ heads } satisfies HeadReply);
      await yieldToEvents();
    }
  } finally {
    running = false;
  }
}

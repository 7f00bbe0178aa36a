import { parentPort } from 'node:worker_threads';
import { countRangeSync } from './count-range.js';
import { LogChangedError } from './lines.js';
import type { RangeRequest } from './parallel-count.js';

/** The range counter's entry: one range in, its count out (see parallel-count.ts). */
parentPort?.once('message', (m: RangeRequest) => {
  try {
    parentPort!.postMessage({ count: countRangeSync(m.path, m.format, m.from, m.to, m.ino) });
  } catch (err) {
    parentPort!.postMessage(err instanceof LogChangedError ? { changed: true } : { error: String(err) });
  }
});

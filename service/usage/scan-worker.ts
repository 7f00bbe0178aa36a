import { parentPort } from 'node:worker_threads';
import { LogReader } from '../sessions/logs.js';
import { scanBatch, type BatchRequest } from './scan-batch.js';

/** The scan worker's entry: one batch in, its results out (see scan-batch.ts). */
const reader = { logs: new LogReader() };
parentPort?.on('message', (message: { id: number; request: BatchRequest }) => {
  parentPort!.postMessage({ id: message.id, results: scanBatch(message.request, reader) });
});

import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WorkerData } from './protocol.js';

/**
 * Starts the indexing worker. Built (dist/, the Electron app), it is worker.js beside this
 * file (Electron loads worker scripts from app.asar). Run from source (tsx, vitest), the
 * worker registers tsx's loader first: a worker thread does not inherit the main thread's.
 */
export function spawnIndexWorker(data: WorkerData): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./worker.js', import.meta.url), { workerData: data });
  const tsxApi = pathToFileURL(path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist', 'esm', 'api', 'index.mjs')).href;
  const entry = new URL('./worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, workerData: data });
}

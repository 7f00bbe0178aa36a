import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts the module `name` (without extension) beside `from` (the caller's import.meta.url)
 * on a worker thread. Built (dist/, the Electron app, which loads worker scripts from
 * app.asar), it is `<name>.js`. From source (tsx, tests, benchmarks) a worker does not
 * inherit the TypeScript loader, so it registers tsx's before importing `<name>.ts`.
 */
export function startWorkerThread(from: string, name: string, options: WorkerOptions = {}): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, from), options);
  const entry = new URL(`./${name}.ts`, from).href;
  const tsx = pathToFileURL(createRequire(from).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { ...options, eval: true });
}

/**
 * One request to a worker thread started for it, ended after its answer: the answer, or
 * undefined when the thread could not start or failed (the caller does the work itself). The
 * thread never holds a stopping process.
 */
export function askWorkerThread<T>(from: string, name: string, request: unknown): Promise<T | undefined> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = startWorkerThread(from, name);
    } catch {
      resolve(undefined);
      return;
    }
    worker.unref();
    worker.once('message', (answer: T) => {
      void worker.terminate();
      resolve(answer);
    });
    worker.once('error', () => {
      void worker.terminate();
      resolve(undefined);
    });
    worker.once('exit', () => resolve(undefined));
    worker.postMessage(request);
  });
}

import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import type { ChildService } from '../test/helpers/child-service.js';
import { Worker } from 'node:worker_threads';

export const MB = 1024 * 1024;

/** Resident set size of a process, in bytes (Linux /proc, else ps). */
export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    // not Linux
  }
  return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)]).toString().trim()) * 1024;
}

/** CPU time (user + system, all threads) a process has used so far, in ms (Linux /proc). */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
}

/** Samples a process's RSS every `ms` until stopped; returns the peak. */
export function sampleRss(pid: number, ms = 10): { stop(): number } {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // the process is gone
    }
  }, ms);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function row(label: string, value: string): void {
  console.log(`  ${label.padEnd(44)} ${value}`);
}

/**
 * Asks `GET /` of a server every `intervalMs` from a worker thread (its own event loop, so
 * the bench's own upload client does not delay it) until stopped; returns each latency in ms.
 */
export function probeLatency(port: number, intervalMs = 20): { stop(): Promise<number[]> } {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const http = require('node:http');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const times = [];
    let stopping = false;
    parentPort.on('message', () => (stopping = true));
    const once = () => new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      http.get({ host: '127.0.0.1', port: workerData.port, path: '/', agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(Number(process.hrtime.bigint() - started) / 1e6));
      }).on('error', reject);
    });
    (async () => {
      while (!stopping) {
        times.push(await once());
        await new Promise((r) => setTimeout(r, workerData.intervalMs));
      }
      agent.destroy();
      parentPort.postMessage(times);
    })();
  `;
  const worker = new Worker(source, { eval: true, workerData: { port, intervalMs } });
  const result = new Promise<number[]>((resolve, reject) => {
    worker.once('message', (times: number[]) => resolve(times));
    worker.once('error', reject);
  });
  return {
    async stop() {
      worker.postMessage('stop');
      const times = await result;
      await worker.terminate();
      return times;
    },
  };
}

/** How long `task` took, in ms, with its result. */
export async function timed<T>(task: () => Promise<T> | T): Promise<[number, T]> {
  const started = process.hrtime.bigint();
  const result = await task();
  return [Number(process.hrtime.bigint() - started) / 1e6, result];
}

/** GET `target` from a service; anything but 200 throws. */
export async function ok(service: ChildService, target: string): Promise<any> {
  const res = await service.request('GET', target);
  if (res.status !== 200) throw new Error(`${target}: ${res.status} ${res.text}`);
  return res.json();
}

/**
 * Newlines of a file counted with nothing else done (1 MiB reads, a native byte search): the
 * ceiling of any count of its lines in Node. Returns the count and the time it took, in ms.
 */
export function bareNewlineCount(file: string): { lines: number; ms: number } {
  const started = process.hrtime.bigint();
  const fd = openSync(file, 'r');
  const buf = Buffer.allocUnsafe(1024 * 1024);
  let lines = 0;
  try {
    for (let pos = 0; ; ) {
      const read = readSync(fd, buf, 0, buf.length, pos);
      if (read <= 0) break;
      pos += read;
      const view = read === buf.length ? buf : buf.subarray(0, read);
      for (let i = view.indexOf(10); i !== -1; i = view.indexOf(10, i + 1)) lines++;
    }
  } finally {
    closeSync(fd);
  }
  return { lines, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

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

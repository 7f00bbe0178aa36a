import { statSync } from 'node:fs';
import { readFileLogSync } from '../sessions/pipeline.js';
import { LogReader } from '../sessions/logs.js';
import { linesFor, readerFor } from '../sessions/markers.js';
import type { SessionIndex } from '../sessions/session-index.js';
import type { LogRef } from '../sessions/types.js';
import { Pricer, startState, UsageCollector, type ScanState } from './collect.js';
import { dayOfMs, endsBefore } from './days.js';
import { priceTable, type PriceDocument } from './pricing.js';
import { emptyUsage, type LogUsage } from './types.js';

/**
 * A batch of JSONL logs read from the start, synchronously: the cold pass, on a scan worker
 * (scan-worker.ts), where blocking reads cost the event loop nothing and a file costs one
 * open and a few reads instead of a promise per step. Same pipeline, collector and prices
 * as the in-process scan.
 */
export interface BatchRequest {
  prices: { builtin: PriceDocument; override?: PriceDocument };
  /** `parentMessages`: a sub-agent's transcript, with the message ids its parent counts (collect.ts Scope). */
  logs: Array<{ key: string; ref: Extract<LogRef, { kind: 'file' }>; parentMessages?: string[] }>;
  /** Only records from this UTC day on are wanted: logs last changed before it are not read. */
  sinceDay?: number;
}

export type BatchResult =
  | { key: string; ino: number; size: number; mtimeMs: number; state: ScanState; usage: LogUsage }
  /** Not read: it last changed (mtime, epoch ms) before the days wanted (see `endsBefore`). */
  | { key: string; deferred: number }
  /** `code`: the errno code when the log could not be read (ENOENT: it is gone). */
  | { key: string; error: string; code?: string };

export function scanBatch(request: BatchRequest, reader: Pick<SessionIndex, 'logs'> = { logs: new LogReader() }): BatchResult[] {
  const pricer = new Pricer(priceTable(request.prices.builtin, request.prices.override));
  return request.logs.map(({ key, ref, parentMessages }) => {
    try {
      const st = statSync(ref.path);
      if (endsBefore(st.mtimeMs, request.sinceDay)) return { key, deferred: st.mtimeMs };
      const state = startState();
      const usage = emptyUsage();
      const scope = parentMessages ? { subagent: { parentMessages: new Set(parentMessages) } } : {};
      const collector = new UsageCollector(usage, state, pricer, dayOfMs(st.mtimeMs), scope);
      for (const entry of readFileLogSync(reader, ref, state.cursor, linesFor(ref.format, 'usage'), readerFor(ref.format, 'usage'))) collector.add(entry);
      return { key, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, state, usage };
    } catch (err) {
      return { key, error: String(err), ...(typeof (err as NodeJS.ErrnoException).code === 'string' ? { code: (err as NodeJS.ErrnoException).code } : {}) };
    }
  });
}

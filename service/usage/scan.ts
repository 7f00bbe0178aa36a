import { linesFor, readerFor } from '../sessions/markers.js';
import { readLog } from '../sessions/pipeline.js';
import type { SessionIndex } from '../sessions/session-index.js';
import type { LogRef } from '../sessions/types.js';
import { UsageCollector, type Pricer, type ScanState, type Scope } from './collect.js';
import type { LogUsage } from './types.js';

/**
 * Reads one log from where its state stopped, through the sessions pipeline, into its
 * LogUsage. Only lines that can hold a prompt, a tool call or usage are parsed (or read by bytes). When it
 * throws, state and usage hold what was read before the failure, consistently (the cursor
 * moves with each entry added); the caller decides whether to start over.
 */
export async function scanLog(reader: Pick<SessionIndex, 'logs'>, log: LogRef, state: ScanState, usage: LogUsage, pricer: Pricer, fallbackDay: number, scope?: Scope): Promise<void> {
  const collector = new UsageCollector(usage, state, pricer, fallbackDay, scope);
  const select = log.kind === 'file' ? linesFor(log.format, 'usage') : undefined;
  const read = log.kind === 'file' ? readerFor(log.format, 'usage') : undefined;
  for await (const entry of readLog(reader, log, state.cursor, select, read)) collector.add(entry);
}

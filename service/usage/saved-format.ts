import type { Counted, ScanState } from './collect.js';
import type { LogUsage, UsageRow } from './types.js';

/**
 * A log's usage and scan state as saved in the aggregates file: JSON text, with each Map as
 * its entries. Not `v8.serialize`: each call of it (and of `v8.deserialize`) makes a C++
 * serializer of a few KB outside the V8 heap, freed only when its small JS wrapper is
 * collected. A save of 20,000 logs made 40,000 of them between two collections and left the
 * main thread's malloc heap 90-200 MB larger for good (glibc keeps what it grew); the text is
 * an ordinary string of the V8 heap.
 */
export function encodeUsage(usage: LogUsage): string {
  return JSON.stringify({ rows: [...usage.rows], messages: [...usage.messages], responses: usage.responses, lastDay: usage.lastDay, firstKey: usage.firstKey });
}

export function decodeUsage(text: string): LogUsage {
  const doc = JSON.parse(text) as { rows: Array<[string, UsageRow]>; messages: Array<[number, number]>; responses: number[]; lastDay: number; firstKey?: string };
  if (!Array.isArray(doc.responses) || typeof doc.lastDay !== 'number') throw new Error('saved usage of another shape');
  return { rows: new Map(doc.rows), messages: new Map(doc.messages), responses: doc.responses, lastDay: doc.lastDay, ...(typeof doc.firstKey === 'string' ? { firstKey: doc.firstKey } : {}) };
}

export function encodeState(state: ScanState): string {
  return JSON.stringify({ cursor: state.cursor, lastResponseTurn: state.lastResponseTurn, seen: [...state.seen], ...(state.copies ? { copies: [...state.copies] } : {}) });
}

export function decodeState(text: string): ScanState {
  const doc = JSON.parse(text) as { cursor: ScanState['cursor']; lastResponseTurn: number; seen: Array<[string, Counted]>; copies?: string[] };
  if (!doc.cursor || typeof doc.cursor.position !== 'number' || typeof doc.lastResponseTurn !== 'number') throw new Error('saved scan state of another shape');
  return { cursor: doc.cursor, lastResponseTurn: doc.lastResponseTurn, seen: new Map(doc.seen), ...(Array.isArray(doc.copies) ? { copies: new Set(doc.copies) } : {}) };
}

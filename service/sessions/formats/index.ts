import type { LogEntry, LogFormat } from '../types.js';
import { normalizeClia, peekClia } from './clia.js';
import { normalizeClib, peekClib } from './clib.js';
import type { LineContext } from './common.js';
import type { Peek } from './quick.js';
import { normalizeRuntimea, peekRuntimea } from './runtimea.js';

export interface Format {
  /** A parsed record -> what it yields, in order. Pure. */
  normalize(record: unknown, ctx: LineContext): LogEntry[];
  /** The roles of the messages a raw line yields, when certain without parsing. */
  peek: Peek;
}

export const FORMATS: Readonly<Record<LogFormat, Format>> = {
  runtimea: { normalize: normalizeRuntimea, peek: peekRuntimea },
  clia: { normalize: normalizeClia, peek: peekClia },
  clib: { normalize: normalizeClib, peek: peekClib },
};

export type { LineContext } from './common.js';

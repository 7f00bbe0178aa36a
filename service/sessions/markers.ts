import type { LineSelect } from './file-log.js';
import { FORMATS, type Consumer } from './formats/index.js';
import type { LogFormat } from './types.js';

/**
 * The pipeline's skip before parsing: a line is parsed only when it holds one of the byte
 * markers its format declares for the consumer reading it (Format.needs). One byte search
 * per marker, no decoding; most lines that are skipped are the biggest (tool output).
 */
const selects = new Map<string, LineSelect>();

export function linesFor(format: LogFormat, consumer: Consumer): LineSelect {
  const key = `${format}\0${consumer}`;
  let select = selects.get(key);
  if (!select) {
    const markers = FORMATS[format].needs[consumer].map((m) => Buffer.from(m));
    select = (line) => {
      for (const marker of markers) if (line.indexOf(marker) !== -1) return true;
      return false;
    };
    selects.set(key, select);
  }
  return select;
}

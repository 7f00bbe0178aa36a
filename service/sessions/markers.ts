import type { LineSelect } from './file-log.js';
import { FORMATS, type Consumer, type LineRead } from '../transcripts/formats.js';
import { startsWith } from '../transcripts/quick.js';
import type { LogFormat } from './types.js';

/**
 * The pipeline's skip before parsing: a line is parsed only when it holds one of the byte
 * markers its format declares for the consumer reading it (Format.needs). No decoding; the
 * markers of a format share a prefix (`"type":"`), so a line costs one byte search for the
 * prefix (native), plus a short comparison at each place it occurs, instead of one search
 * per marker (which cost more than parsing the lines it spared).
 */
const selects = new Map<string, LineSelect>();

export function linesFor(format: LogFormat, consumer: Consumer): LineSelect {
  const key = `${format}\0${consumer}`;
  let select = selects.get(key);
  if (!select) {
    const markers = markerSelect(FORMATS[format].needs[consumer]);
    const narrow = FORMATS[format].narrow?.[consumer];
    select = narrow ? (line) => markers(line) && narrow(line) : markers;
    selects.set(key, select);
  }
  return select;
}

/** The consumer's reader of the format's lines by bytes, tried before `linesFor`'s select (Format.read). */
export function readerFor(format: LogFormat, consumer: Consumer): LineRead | undefined {
  return FORMATS[format].read?.[consumer];
}

/** A line select true for lines holding any of `markers`. */
export function markerSelect(markers: readonly string[]): LineSelect {
  const bytes = markers.map((m) => Buffer.from(m));
  const shared = commonPrefix(bytes);
  if (shared < 4) {
    return (line) => {
      for (const marker of bytes) if (line.indexOf(marker) !== -1) return true;
      return false;
    };
  }
  const prefix = bytes[0]!.subarray(0, shared);
  const rests = bytes.map((b) => b.subarray(shared));
  return (line) => {
    for (let at = line.indexOf(prefix); at !== -1; at = line.indexOf(prefix, at + 1)) {
      const after = at + shared;
      for (const rest of rests) if (startsWith(line, rest, after)) return true;
    }
    return false;
  };
}

function commonPrefix(words: readonly Buffer[]): number {
  if (words.length === 0) return 0;
  let n = Math.min(...words.map((w) => w.length));
  for (const w of words) {
    let i = 0;
    while (i < n && w[i] === words[0]![i]) i++;
    n = i;
  }
  return n;
}

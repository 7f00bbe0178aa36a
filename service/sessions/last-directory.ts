import { open } from './disk.js';
import { FORMATS } from '../transcripts/formats.js';
import type { LogRef } from './types.js';

/** How far back from a log's end its last working directory is looked for. */
const TAIL_BYTES = 4 * 1024 * 1024;
const CWD = Buffer.from('"cwd":"');

/**
 * The last working directory a terminal history log states (Claude Code: every record's
 * `cwd`; Codex: each `turn_context`): where the user last ran it, and so where a resume runs
 * (the user may `cd` mid-session). Undefined when its last TAIL_BYTES state none.
 */
export async function lastDirectory(log: LogRef): Promise<string | undefined> {
  if (log.kind !== 'file') return undefined;
  const of = FORMATS[log.format].directory;
  if (!of) return undefined;
  const fh = await open(log.path, 'r');
  try {
    const { size } = await fh.stat();
    const start = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - start);
    await fh.read(buf, 0, buf.length, start);
    let end = buf.length;
    while (end > 0) {
      const nl = buf.lastIndexOf(0x0a, end - 1);
      const line = buf.subarray(nl + 1, end);
      end = nl === -1 ? 0 : nl;
      if (line.indexOf(CWD) === -1) continue;
      try {
        const dir = of(JSON.parse(line.toString('utf8')));
        if (dir) return dir;
      } catch {
        // a cut first line or a damaged one: look further back
      }
    }
    return undefined;
  } finally {
    await fh.close();
  }
}

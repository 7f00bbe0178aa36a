import type { Logger } from '../../log.js';
import { LOG_LINE_BYTES, onBoundedLines } from '../../process/bounded-lines.js';
import type { OwnedProcess } from '../../process/supervisor.js';

const TAIL_LINES = 30;

/**
 * The last lines an OpenClaw process printed (colours stripped, its secret masked), for the
 * errors that quote them; every line also goes to the log at debug.
 */
export class OutputTail {
  private lines: string[] = [];

  constructor(private readonly log: Logger) {}

  /** Starts over for a new process and reads its stdout and stderr. */
  follow(proc: OwnedProcess, secret?: string): void {
    this.lines = [];
    for (const stream of [proc.child.stdout, proc.child.stderr]) {
      if (!stream) continue;
      void onBoundedLines(stream, (raw) => {
        // eslint-disable-next-line no-control-regex
        let line = raw.replace(/\x1b\[[0-9;]*m/g, '');
        if (secret) line = line.split(secret).join('***');
        this.lines.push(line);
        if (this.lines.length > TAIL_LINES) this.lines.shift();
        this.log.debug({ pid: proc.pid, line }, 'runtimea gateway');
      }, LOG_LINE_BYTES);
    }
  }

  /** The last lines, on one line. */
  text(): string {
    return this.lines.slice(-8).join(' | ').slice(-2000);
  }
}

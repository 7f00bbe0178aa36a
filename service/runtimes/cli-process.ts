import { boundedLines } from '../process/bounded-lines.js';
import type { ExitStatus, OwnedProcess, Supervisor } from '../process/supervisor.js';

/**
 * One run of an agent CLI for one turn, through the supervisor (own process group, no
 * shell, stdin closed): its stdout as lines, a tail of its stderr for error messages, and
 * the two ways to end it early. Shared by the CLI runtimes; the protocol lives elsewhere.
 */
export interface CliProcess {
  readonly pid: number;
  /** stdout, line by line; ends when stdout closes (or soon after the program exits). */
  readonly lines: AsyncIterable<string>;
  readonly exited: Promise<ExitStatus>;
  /** The last few KB of stderr, for a readable error. */
  stderrTail(): string;
  /**
   * SIGINT to the whole group (what Ctrl-C does); after `graceMs` whatever is left gets
   * SIGTERM, and SIGKILL after another `graceMs`.
   */
  interrupt(graceMs: number): void;
  /** SIGTERM, then SIGKILL, to whatever is left of the group. */
  stop(): Promise<void>;
  /** One line to the program's stdin (only with `stdin: true`); false once stdin is closed. */
  write(line: string): boolean;
  /** Closes stdin (the program's end of input). */
  endInput(): void;
}

export interface CliStart {
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Told the size of each stdout line dropped for being over MAX_LINE_BYTES. */
  onDroppedLine?: (bytes: number) => void;
  /** A pipe for stdin (a protocol on it) instead of none. */
  stdin?: boolean;
}

const STDERR_TAIL = 8 * 1024;
/** After the program exited, this long without output means only a stray writer keeps stdout open. */
const STRAY_WRITER_QUIET_MS = 2000;

/** Starts the program; rejects when it cannot be started at all (ENOENT, EACCES). */
export async function startCliProcess(supervisor: Supervisor, start: CliStart): Promise<CliProcess> {
  const owned = await supervisor.spawn({ command: start.command, args: start.args, cwd: start.cwd, env: start.env, stdio: [start.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  const { child } = owned;
  // EPIPE after the program went away is told by `exited`, not thrown.
  child.stdin?.on('error', () => undefined);
  const input = child.stdin;
  const open = (): boolean => !!input && !input.writableEnded && !input.destroyed;
  const stderr = new TailBuffer(STDERR_TAIL);
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
  // Bounded: a program printing without newlines must not grow the service without limit.
  const lines = boundedLines(child.stdout!, undefined, start.onDroppedLine);
  void owned.exited.then(() => endAfterExit(owned));
  let graceTimer: NodeJS.Timeout | undefined;
  return {
    pid: owned.pid,
    lines,
    exited: owned.exited,
    stderrTail: () => stderr.text(),
    interrupt: (graceMs) => {
      if (graceTimer) return;
      signalGroup(owned, 'SIGINT');
      graceTimer = setTimeout(() => void owned.stop(graceMs), graceMs);
      graceTimer.unref();
    },
    stop: async () => {
      clearTimeout(graceTimer);
      input?.end();
      await owned.stop();
    },
    write: (line) => {
      if (!open()) return false;
      input!.write(line.endsWith('\n') ? line : `${line}\n`);
      return true;
    },
    endInput: () => {
      if (open()) input!.end();
    },
  };
}

/**
 * Once the program has exited, what is left of its group (a tool's background process) is
 * stopped, which closes their ends of stdout, so stdout ends after its last line is read.
 * A writer outside the group could still hold it open: reading stops only once the reader
 * keeps up, nothing is buffered and nothing has arrived for a while, never earlier (that
 * would drop unread lines).
 */
async function endAfterExit(owned: OwnedProcess): Promise<void> {
  const stdout = owned.child.stdout!;
  let lastData = Date.now();
  stdout.on('data', () => (lastData = Date.now()));
  await owned.stop();
  const check = (): void => {
    if (stdout.readableEnded || stdout.destroyed) return;
    if (stdout.readableLength === 0 && Date.now() - lastData >= STRAY_WRITER_QUIET_MS) {
      stdout.destroy(); // ends the line reader
      return;
    }
    setTimeout(check, STRAY_WRITER_QUIET_MS).unref();
  };
  setTimeout(check, STRAY_WRITER_QUIET_MS).unref();
}

function signalGroup(owned: OwnedProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-owned.pid, signal);
  } catch {
    // ESRCH: nothing left to signal.
  }
}

/**
 * The last `size` bytes of a stream, kept as bytes: decoding every chunk to a string and
 * concatenating would make garbage at the rate the program writes (a runaway program's
 * 200 MB of stderr became hundreds of MB of short-lived strings).
 */
class TailBuffer {
  private readonly bytes: Buffer;
  private length = 0;

  constructor(private readonly size: number) {
    this.bytes = Buffer.alloc(size);
  }

  push(chunk: Buffer): void {
    if (chunk.length >= this.size) {
      chunk.copy(this.bytes, 0, chunk.length - this.size);
      this.length = this.size;
      return;
    }
    const keep = Math.min(this.length, this.size - chunk.length);
    this.bytes.copy(this.bytes, 0, this.length - keep, this.length);
    chunk.copy(this.bytes, keep);
    this.length = keep + chunk.length;
  }

  /** The tail as text; a UTF-8 sequence cut at the start becomes U+FFFD. */
  text(): string {
    return this.bytes.toString('utf8', 0, this.length);
  }
}

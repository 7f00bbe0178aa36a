import { createInterface, type Interface } from 'node:readline';
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
}

export interface CliStart {
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

const STDERR_TAIL = 8 * 1024;
/** After the program exited, this long without output means only a stray writer keeps stdout open. */
const STRAY_WRITER_QUIET_MS = 2000;

/** Starts the program; rejects when it cannot be started at all (ENOENT, EACCES). */
export async function startCliProcess(supervisor: Supervisor, start: CliStart): Promise<CliProcess> {
  const owned = await supervisor.spawn({ ...start, stdio: ['ignore', 'pipe', 'pipe'] });
  const { child } = owned;
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  const lines = createInterface({ input: child.stdout!, crlfDelay: Infinity });
  void owned.exited.then(() => endAfterExit(owned, lines));
  let graceTimer: NodeJS.Timeout | undefined;
  return {
    pid: owned.pid,
    lines,
    exited: owned.exited,
    stderrTail: () => stderr,
    interrupt: (graceMs) => {
      if (graceTimer) return;
      signalGroup(owned, 'SIGINT');
      graceTimer = setTimeout(() => void owned.stop(graceMs), graceMs);
      graceTimer.unref();
    },
    stop: async () => {
      clearTimeout(graceTimer);
      await owned.stop();
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
async function endAfterExit(owned: OwnedProcess, lines: Interface): Promise<void> {
  const stdout = owned.child.stdout!;
  let lastData = Date.now();
  stdout.on('data', () => (lastData = Date.now()));
  await owned.stop();
  const check = (): void => {
    if (stdout.readableEnded || stdout.destroyed) return;
    if (!stdout.isPaused() && stdout.readableLength === 0 && Date.now() - lastData >= STRAY_WRITER_QUIET_MS) {
      lines.close();
      stdout.destroy();
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

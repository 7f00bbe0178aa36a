import { createInterface } from 'node:readline';
import type { OwnedProcess, Supervisor } from '../process/supervisor.js';

/**
 * One run of an agent CLI for one turn, through the supervisor (own process group, no
 * shell, stdin closed): its stdout as lines, a tail of its stderr for error messages, and
 * the two ways to end it early. Shared by the CLI runtimes; the protocol lives elsewhere.
 */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

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
/** A grandchild may hold stdout open after the program exits; stop reading after this. */
const DRAIN_AFTER_EXIT_MS = 1000;

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
  void owned.exited.then(() => {
    setTimeout(() => {
      lines.close();
      child.stdout!.destroy();
    }, DRAIN_AFTER_EXIT_MS).unref();
  });
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

function signalGroup(owned: OwnedProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-owned.pid, signal);
  } catch {
    // ESRCH: nothing left to signal.
  }
}

import type { Supervisor } from './supervisor.js';

/**
 * One short-lived program run to its end through the supervisor (own process group, no
 * shell, stdin closed): its stdout (capped), the tail of its stderr, and its exit. A run
 * that outlives `timeoutMs` has its whole group stopped. Rejects only when the program
 * cannot be started at all (ENOENT, EACCES).
 */
export interface RunRequest {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs: number;
  /** Bytes of stdout kept; the rest is read and dropped (a runaway program cannot fill memory). */
  maxStdout?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const STDERR_TAIL = 16 * 1024;

export async function runToEnd(supervisor: Supervisor, request: RunRequest): Promise<RunResult> {
  const owned = await supervisor.spawn({ command: request.command, args: request.args, env: request.env, cwd: request.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const maxStdout = request.maxStdout ?? 1024 * 1024;
  let stdout = '';
  let stderr = '';
  owned.child.stdout!.setEncoding('utf8');
  owned.child.stderr!.setEncoding('utf8');
  owned.child.stdout!.on('data', (chunk: string) => {
    if (stdout.length < maxStdout) stdout += chunk.slice(0, maxStdout - stdout.length);
  });
  owned.child.stderr!.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void owned.stop(1000);
  }, request.timeoutMs);
  timer.unref();
  const [exit] = await Promise.all([owned.exited, closed(owned.child.stdout!), closed(owned.child.stderr!)]);
  clearTimeout(timer);
  return { ...exit, stdout, stderr, timedOut };
}

/** Resolves when the stream has ended or been destroyed (a grandchild may hold it open: stop() ends those). */
function closed(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => {
    stream.once('close', resolve);
    stream.once('end', resolve);
  });
}

import { runToEnd } from '../process/run.js';
import type { Supervisor } from '../process/supervisor.js';
import { which } from '../process/which.js';
import { GitError } from './git.js';

/**
 * How a big checkpoint is made durable. git's batch flush (`core.fsyncMethod=batch`) still
 * writes each object out on its own and moves it into place after one hardware flush: on the
 * first checkpoint of thousands of files that doubled its time here (docs/checkpoints.md).
 * On Linux a checkpoint that stages many paths is written unflushed instead, and the store's
 * file system is then flushed once (`sync -f`: syncfs(2)) before its tree is named anywhere.
 * A small checkpoint keeps git's batch flush: syncfs would also wait for whatever else the
 * machine has dirty. Elsewhere (no syncfs) git's batch flush is always used.
 */
export const BULK_PATHS = 256;

export class FileSystemFlush {
  private program: string | null | undefined;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly searchPath: string | undefined,
  ) {}

  /** Whether a checkpoint staging `paths` paths is written unflushed and flushed once at its end. */
  covers(paths: number): boolean {
    if (paths < BULK_PATHS || process.platform !== 'linux') return false;
    if (this.program === undefined) this.program = which('sync', this.searchPath ?? process.env.PATH ?? '');
    return this.program !== null;
  }

  /** Flushes the file system that holds `dir`; a `sync` without `-f` is not used again. */
  async flush(dir: string, deadline: number): Promise<void> {
    const timeoutMs = deadline - Date.now();
    if (timeoutMs <= 0 || !this.program) throw new GitError('the checkpoint took too long', true);
    const run = await runToEnd(this.supervisor, { command: this.program, args: ['-f', dir], env: { PATH: this.searchPath ?? '/usr/bin:/bin', LC_ALL: 'C' }, timeoutMs });
    if (run.timedOut) throw new GitError('the checkpoint took too long', true);
    if (run.code === 0) return;
    this.program = null;
    throw new GitError(`the checkpoint could not be flushed to disk (sync -f: ${run.stderr.trim().split('\n').at(-1) ?? `exit ${run.code ?? run.signal}`})`);
  }
}

import { createHash } from 'node:crypto';
import { lstat, mkdir, realpath, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Supervisor } from '../process/supervisor.js';
import { which } from '../process/which.js';
import { KeyedLock } from '../stores/lock.js';
import { writeFileAtomically } from '../stores/atomic.js';
import { excludeLines } from './excludes.js';
import { FileSystemFlush } from './flush.js';
import { GitError, runGit, type GitResult, type GitRun, type GitStore } from './git.js';

/**
 * The checkpoint store: one bare git repository of the service's own per project directory
 * (`<root>/<sha256(realpath)[:16]>/store.git`, owner-only), with a persistent index beside
 * it, so each checkpoint hashes only what changed since the last one (git's stat cache). A
 * checkpoint is a tree object named in the turns ledger; nothing is ever written to the
 * project or to the user's own repository.
 */
export interface CheckpointLimits {
  /** Files above this are not copied (listed as skipped). */
  maxFileBytes: number;
  /** A checkpoint gives up past this. */
  timeoutMs: number;
  /** A checkpoint gives up when more new files than this appeared. */
  maxNewFiles: number;
  /** The git program. */
  git: string;
  /** PATH the git runs see. */
  path: string | undefined;
}

export interface SkippedFile {
  path: string;
  size: number;
}

export type Snapshot = { ok: true; tree: string; skipped: SkippedFile[]; notCovered: string[] } | { ok: false; reason: string };

export class CheckpointStore {
  private readonly locks = new KeyedLock();
  private gitPath: string | null | undefined;
  private readonly flusher: FileSystemFlush;

  constructor(
    readonly root: string,
    private readonly supervisor: Supervisor,
    readonly limits: CheckpointLimits,
  ) {
    this.flusher = new FileSystemFlush(supervisor, limits.path);
  }

  /** Why checkpoints are off on this machine, or undefined when git is there. */
  unavailable(): string | undefined {
    if (this.gitPath === undefined) this.gitPath = which(this.limits.git, this.limits.path ?? process.env.PATH ?? '');
    return this.gitPath ? undefined : `checkpoints are off: git (${this.limits.git}) was not found on PATH`;
  }

  /** The store of a project directory (created on first use). */
  async storeOf(directory: string): Promise<GitStore> {
    const real = await realpath(directory);
    const key = createHash('sha256').update(real).digest('hex').slice(0, 16);
    const dir = path.join(this.root, key);
    return { gitDir: path.join(dir, 'store.git'), indexFile: path.join(dir, 'index'), workTree: real };
  }

  /** Runs `task` with no other checkpoint or revert of the same store in between. */
  exclusive<T>(store: GitStore, task: () => Promise<T>): Promise<T> {
    return this.locks.run(store.gitDir, task);
  }

  git(store: GitStore, run: GitRun): Promise<GitResult> {
    return runGit(this.supervisor, this.gitPath ?? this.limits.git, store, run, this.limits.path);
  }

  /**
   * Records the directory's files now; gives up (never throws) past the bounds. `staged` is
   * called once every file's content is in the store (the files may change from then on):
   * the tree is written and flushed after it, still under the store's lock.
   */
  async snapshot(directory: string, staged?: () => void): Promise<Snapshot> {
    const off = this.unavailable();
    if (off) return { ok: false, reason: off };
    let store: GitStore;
    try {
      store = await this.storeOf(directory);
    } catch (err) {
      return { ok: false, reason: `the checkpoint failed: ${(err as Error).message}` };
    }
    return this.exclusive(store, () => this.captureLocked(store, staged));
  }

  /** A checkpoint, for a caller that holds the store (`exclusive`). */
  async captureLocked(store: GitStore, staged?: () => void): Promise<Snapshot> {
    const deadline = Date.now() + this.limits.timeoutMs;
    try {
      return await this.capture(store, deadline, staged);
    } catch (err) {
      if (err instanceof GitError && err.timedOut) return { ok: false, reason: `the checkpoint took longer than ${this.limits.timeoutMs} ms and was given up` };
      return { ok: false, reason: `the checkpoint failed: ${(err as Error).message}` };
    }
  }

  private async capture(store: GitStore, deadline: number, staged?: () => void): Promise<Snapshot> {
    await this.ready(store, deadline);
    const exclude = path.join(store.gitDir, 'info', 'exclude');
    await writeFile(exclude, await excludeLines(store.workTree, [], []));
    const listed = await this.git(store, { args: ['ls-files', '-z', '--others', '--modified', '--exclude-standard'], deadline });
    const candidates = [...new Set(splitZ(listed.stdout))];
    const { nested, files } = { nested: candidates.filter((p) => p.endsWith('/')).map((p) => p.slice(0, -1)), files: candidates.filter((p) => !p.endsWith('/')) };
    if (files.length > this.limits.maxNewFiles) return { ok: false, reason: `${files.length} new or changed files (more than ${this.limits.maxNewFiles}): the checkpoint was given up` };
    const skipped = await this.oversized(store.workTree, files);
    await writeFile(exclude, await excludeLines(store.workTree, nested, skipped.map((s) => s.path)));
    if (skipped.length > 0) await this.git(store, { args: ['update-index', '-z', '--force-remove', '--stdin'], input: skipped.map((s) => `${s.path}\0`).join(''), deadline });
    const left = new Set(skipped.map((s) => s.path));
    const changed = files.filter((file) => !left.has(file));
    const bulk = this.flusher.covers(changed.length);
    const config = bulk ? ['core.fsync=none'] : [];
    await this.stage(store, changed, deadline, config);
    staged?.();
    // No ref per checkpoint: the store is never collected except by pruning, which first names
    // every tree a ledger still holds (prune.ts). Outside a bulk, git flushes each new tree
    // object on its own (write-tree has no batch): that is why a turn does not wait for it.
    const tree = (await this.git(store, { args: ['write-tree'], deadline, config })).stdout.toString().trim();
    if (bulk) await this.flusher.flush(store.gitDir, deadline);
    return { ok: true, tree, skipped, notCovered: nested.sort() };
  }

  /**
   * Stages what ls-files named (new, modified, deleted) without a second walk of the tree. A
   * path update-index cannot take (unreadable, a file that became a folder) makes it refuse
   * the whole list: then `add -A --ignore-errors` walks the tree, skipping what it cannot read.
   */
  private async stage(store: GitStore, paths: readonly string[], deadline: number, config: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    try {
      await this.git(store, { args: ['update-index', '--add', '--remove', '--replace', '-z', '--stdin'], input: paths.map((p) => `${p}\0`).join(''), deadline, config });
    } catch (err) {
      if (err instanceof GitError && err.timedOut) throw err;
      await this.git(store, { args: ['add', '-A', '--ignore-errors', '--', '.'], deadline, okCodes: [1], config });
    }
  }

  /** Creates the store on first use (atomically: a half-made one is never used) and clears a lock a killed run left. */
  private async ready(store: GitStore, deadline: number): Promise<void> {
    const dir = path.dirname(store.gitDir);
    if (!(await exists(path.join(store.gitDir, 'HEAD')))) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const temp = `${store.gitDir}.${process.pid}.tmp`;
      await rm(temp, { recursive: true, force: true });
      await this.git({ ...store, gitDir: temp }, { args: ['init', '--bare', '-q'], deadline, bare: true });
      await writeFileAtomically(path.join(dir, 'meta.json'), `${JSON.stringify({ directory: store.workTree })}\n`, { mode: 0o600 });
      await rename(temp, store.gitDir);
    }
    // Only this process writes the store, and only under its lock: a lock file now is a killed run's.
    await unlink(`${store.indexFile}.lock`).catch(() => undefined);
    await rm(path.join(dir, 'index.tmp'), { force: true });
  }

  private async oversized(workTree: string, files: readonly string[]): Promise<SkippedFile[]> {
    const out: SkippedFile[] = [];
    for (let at = 0; at < files.length; at += 256) {
      const batch = files.slice(at, at + 256);
      const infos = await Promise.all(batch.map((file) => lstat(path.join(workTree, file)).catch(() => undefined)));
      infos.forEach((info, i) => {
        if (info?.isFile() && info.size > this.limits.maxFileBytes) out.push({ path: batch[i]!, size: info.size });
      });
    }
    return out;
  }
}

export function splitZ(out: Buffer): string[] {
  return out.toString('utf8').split('\0').filter(Boolean);
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

import path from 'node:path';
import type { Supervisor } from '../process/supervisor.js';

/**
 * One git run against a checkpoint store, never the user's repository: GIT_DIR and
 * GIT_INDEX_FILE are the store's own, GIT_WORK_TREE the project, and nothing of the user's
 * git set-up takes part (no system or global config, no hooks, no fsmonitor, no attributes
 * filters: every option that could run a program or read the user's settings is pinned).
 * The run is owned by the supervisor (its group is stopped on timeout, abort and shutdown).
 */
export interface GitStore {
  /** The store's bare git directory. */
  gitDir: string;
  /** The store's own index (kept between checkpoints: git's stat cache). */
  indexFile: string;
  /** The project directory checkpointed. */
  workTree: string;
}

export interface GitRun {
  args: readonly string[];
  /** Written to the program's stdin, which is then closed. */
  input?: string | Buffer;
  /** The run is stopped at this time (ms since epoch) and fails as timed out. */
  deadline: number;
  /** Bytes of stdout kept (default 64 MB); `overflow` says when more came. */
  maxStdout?: number;
  /** Exit codes that are not a failure (diff's 1). */
  okCodes?: readonly number[];
  /** Without the work tree (`init --bare` refuses one). */
  bare?: boolean;
  /** `key=value` settings of this run, over the pinned ones. */
  config?: readonly string[];
}

export interface GitResult {
  stdout: Buffer;
  overflow: boolean;
}

/** A git run that did not succeed; `timedOut` when the deadline stopped it. */
export class GitError extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** Options that keep git to plumbing on our store, whatever the user's config says. */
const PINNED = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  // Our own index: its untracked cache (directory mtimes) spares re-reading unchanged folders.
  'core.untrackedCache=true',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.symlinks=true',
  'core.quotePath=false',
  'core.splitIndex=false',
  'core.ignoreStat=false',
  'core.trustctime=true',
  'core.checkStat=default',
  'core.fsync=objects,reference,index',
  // One flush for all the objects an `add` writes, not one per object.
  'core.fsyncMethod=batch',
  'core.bigFileThreshold=512m',
  'gc.auto=0',
  'maintenance.auto=false',
  'commit.gpgSign=false',
  'advice.addEmbeddedRepo=false',
  'advice.addIgnoredFile=false',
  'diff.external=',
  'diff.noprefix=false',
  'diff.mnemonicPrefix=false',
  'diff.renames=false',
  'diff.relative=false',
  'status.showUntrackedFiles=all',
].flatMap((kv) => ['-c', kv]);

export function gitEnv(store: GitStore, searchPath: string | undefined, bare = false): NodeJS.ProcessEnv {
  return {
    PATH: searchPath ?? '/usr/bin:/bin',
    GIT_DIR: store.gitDir,
    ...(bare ? {} : { GIT_WORK_TREE: store.workTree }),
    GIT_INDEX_FILE: store.indexFile,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_LITERAL_PATHSPECS: '1',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'space',
    GIT_AUTHOR_EMAIL: 'space@localhost',
    GIT_COMMITTER_NAME: 'space',
    GIT_COMMITTER_EMAIL: 'space@localhost',
    HOME: store.gitDir,
    XDG_CONFIG_HOME: store.gitDir,
    LC_ALL: 'C',
  };
}

export async function runGit(supervisor: Supervisor, git: string, store: GitStore, run: GitRun, pathEnv?: string): Promise<GitResult> {
  const remaining = run.deadline - Date.now();
  if (remaining <= 0) throw new GitError('the checkpoint took too long', true);
  const owned = await supervisor.spawn({ command: git, args: [...PINNED, ...(run.config ?? []).flatMap((kv) => ['-c', kv]), ...run.args], env: gitEnv(store, pathEnv, run.bare), cwd: run.bare ? path.dirname(store.gitDir) : store.workTree, stdio: ['pipe', 'pipe', 'pipe'] });
  const maxStdout = run.maxStdout ?? 64 * 1024 * 1024;
  const chunks: Buffer[] = [];
  let size = 0;
  let overflow = false;
  let stderr = '';
  owned.child.stdout!.on('data', (chunk: Buffer) => {
    if (size >= maxStdout) return void (overflow = true);
    const kept = chunk.subarray(0, maxStdout - size);
    chunks.push(kept);
    size += kept.length;
    if (kept.length < chunk.length) overflow = true;
  });
  owned.child.stderr!.setEncoding('utf8');
  owned.child.stderr!.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8192)));
  const drained = Promise.all([ended(owned.child.stdout!), ended(owned.child.stderr!)]);
  owned.child.stdin!.on('error', () => undefined);
  owned.child.stdin!.end(run.input ?? '');
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void owned.stop(200);
  }, remaining);
  const exit = await owned.exited;
  await drained;
  clearTimeout(timer);
  if (timedOut) throw new GitError('the checkpoint took too long', true);
  if (exit.code === 0 || (exit.code !== null && run.okCodes?.includes(exit.code))) return { stdout: Buffer.concat(chunks), overflow };
  throw new GitError(`git ${run.args[0]} failed: ${stderr.trim().split('\n').at(-1) ?? `exit ${exit.code ?? exit.signal}`}`);
}

function ended(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => {
    stream.once('close', resolve);
    stream.once('end', resolve);
  });
}

import { readdirSync, statSync, unwatchFile, watch, watchFile, type Dirent, type FSWatcher, type Stats } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.js';
import { roleOf, type SessionRoots } from './layout.js';
import { codexNamesFile, rootList } from './history-layout.js';

export interface SessionWatcher {
  /** Resolves once every root is watched (a root that does not exist yet is watched for). */
  readonly ready: Promise<void>;
  /** Hands over the batch still gathering now, without waiting out the debounce; false when there is none. */
  flush(): boolean;
  close(): Promise<void>;
}

/** How long changes are gathered before the index is refreshed. */
export const DEBOUNCE_MS = 100;
/** How often a root that does not exist (yet) is looked for. */
export const MISSING_ROOT_POLL_MS = 500;
/** How often Codex's names file is stat'ed (a rename shows within about this and DEBOUNCE_MS). */
export const NAMES_POLL_MS = 500;

/**
 * Watches the folders of the session layout (and only them: a path outside the layout is
 * never walked or watched) with one `fs.watch` per folder, which reports the changes of the
 * files in it by name, and hands changed paths over in debounced batches. A folder of the
 * layout that appears is watched from then on (and reported, so the index walks it); one
 * that goes away is no longer watched. One watch per folder, not per file: at 10,000
 * sessions a per-file watcher (chokidar) spent over a second of the start-up's CPU on stats
 * and watches, and a watch per file can exhaust the user's inotify watches.
 *
 * Codex's names file (`session_index.jsonl`, outside the folders) is stat'ed every
 * NAMES_POLL_MS and reported when it changed.
 *
 * A root that does not exist is looked for with a stat every MISSING_ROOT_POLL_MS, not by
 * watching its parent: the parent is usually HOME, where any program's busy file (a shell
 * history, a rename loop) would wake the service for every write.
 */
export function watchSessions(roots: SessionRoots, onChanged: (paths: string[]) => void, log: Logger): SessionWatcher {
  const watchers = new Map<string, FSWatcher>();
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const flush = (): boolean => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return false;
    const batch = [...pending];
    pending = new Set();
    onChanged(batch);
    return true;
  };
  const report = (p: string): void => {
    if (closed) return;
    pending.add(p);
    timer ??= setTimeout(flush, DEBOUNCE_MS);
  };

  const unwatch = (dir: string): void => {
    for (const [p, w] of watchers) {
      if (p === dir || p.startsWith(dir + path.sep)) {
        w.close();
        watchers.delete(p);
      }
    }
  };

  /** Watches `dir` and every folder of the layout below it. */
  const watchTree = (dir: string): void => {
    if (closed || watchers.has(dir)) return;
    let w: FSWatcher;
    try {
      w = watch(dir, (_event, name) => changed(dir, name));
    } catch {
      return; // gone already, or not a folder: its parent's watch reports it
    }
    w.on('error', (err) => {
      log.debug({ dir, err: String(err) }, 'session folder watch ended');
      lost(dir);
    });
    watchers.set(dir, w);
    // A folder of logs (thousands of entries) holds no folder to watch: not listed.
    const role = roleOf(roots, dir);
    if (role?.type === 'dir' && role.files) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      // Files (most entries: the logs) need no watch of their own.
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      const child = path.join(dir, entry.name);
      if (roleOf(roots, child)?.type === 'dir' && isFolder(child)) watchTree(child);
    }
  };

  /** A watched folder went away: forgotten, reported, and looked for again when it is a root. */
  const lost = (dir: string): void => {
    unwatch(dir);
    report(dir);
    if (rootSet.has(dir)) awaitRoot(dir);
  };

  const changed = (dir: string, name: string | Buffer | null): void => {
    // A root renamed or removed reports on its own watch; its folder is gone, not a child.
    if (rootSet.has(dir) && !isFolder(dir)) return lost(dir);
    // No name: the kernel's queue overflowed; the whole folder is read again.
    if (name === null) return report(dir);
    const p = path.join(dir, name.toString());
    const role = roleOf(roots, p);
    if (!role) return;
    if (role.type === 'dir') {
      if (isFolder(p)) watchTree(p);
      else unwatch(p);
    }
    report(p);
  };

  const polled = new Set<string>();
  /** Polls for `root` until it is a folder, then watches it (and reports it, so the index walks it). */
  const awaitRoot = (root: string): void => {
    if (closed || polled.has(root)) return;
    polled.add(root);
    watchFile(root, { interval: MISSING_ROOT_POLL_MS }, (now: Stats) => {
      if (!now.isDirectory() || closed) return;
      unwatchFile(root);
      polled.delete(root);
      watchTree(root);
      report(root);
    });
    // Made between the check and the poll's first stat: the poll sees no change.
    if (isFolder(root)) {
      unwatchFile(root);
      polled.delete(root);
      watchTree(root);
    }
  };

  const rootSet = new Set(rootList(roots));
  for (const root of rootSet) {
    if (isFolder(root)) watchTree(root);
    else awaitRoot(root);
  }
  // Codex's names file, by a stat poll: its folder (CODEX_HOME) holds files Codex writes all
  // the time (its state database, logs), which a watch of the folder would wake for.
  const names = codexNamesFile(roots);
  if (names) watchFile(names, { interval: NAMES_POLL_MS }, () => report(names));
  return {
    ready: Promise.resolve(),
    flush,
    close: async () => {
      closed = true;
      clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
      for (const root of polled) unwatchFile(root);
      polled.clear();
      if (names) unwatchFile(names);
    },
  };
}

function isFolder(p: string): boolean {
  // A path through a file (ENOTDIR) or one that cannot be read is no folder to watch.
  try {
    return statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

import { existsSync, readdirSync, statSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.js';
import { roleOf, type SessionRoots } from './layout.js';

export interface SessionWatcher {
  /** Resolves once every root is watched (a root that does not exist yet is watched for). */
  readonly ready: Promise<void>;
  /** Hands over the batch still gathering now, without waiting out the debounce; false when there is none. */
  flush(): boolean;
  close(): Promise<void>;
}

/** How long changes are gathered before the index is refreshed. */
export const DEBOUNCE_MS = 100;

/**
 * Watches the folders of the session layout (and only them: a path outside the layout is
 * never walked or watched) with one `fs.watch` per folder, which reports the changes of the
 * files in it by name, and hands changed paths over in debounced batches. A folder of the
 * layout that appears is watched from then on (and reported, so the index walks it); one
 * that goes away is no longer watched. One watch per folder, not per file: at 10,000
 * sessions a per-file watcher (chokidar) spent over a second of the start-up's CPU on stats
 * and watches, and a watch per file can exhaust the user's inotify watches.
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
      unwatch(dir);
      report(dir);
    });
    watchers.set(dir, w);
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

  const changed = (dir: string, name: string | Buffer | null): void => {
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

  for (const target of watchTargets(roots)) watchTree(target);
  return {
    ready: Promise.resolve(),
    flush,
    close: async () => {
      closed = true;
      clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}

function isFolder(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/**
 * The nearest existing folder above each root: watching the root's parent (its other
 * children are ignored) sees a root that is created later.
 */
export function watchTargets(roots: SessionRoots): string[] {
  const targets = new Set<string>();
  for (const root of Object.values(roots)) {
    let dir = path.dirname(root);
    while (!existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    targets.add(dir);
  }
  return [...targets];
}

import { existsSync } from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
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
 * Watches the session folders (and only them: every path outside the layout is ignored, so
 * chokidar never walks a project's files) and hands changed paths over in debounced batches.
 */
export function watchSessions(roots: SessionRoots, onChanged: (paths: string[]) => void, log: Logger): SessionWatcher {
  const watcher: FSWatcher = watch(watchTargets(roots), {
    ignoreInitial: true,
    ignored: (target: string) => roleOf(roots, target) === undefined,
  });
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const flush = (): boolean => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return false;
    const batch = [...pending];
    pending = new Set();
    onChanged(batch);
    return true;
  };
  watcher.on('all', (_event, target) => {
    pending.add(target);
    timer ??= setTimeout(flush, DEBOUNCE_MS);
  });
  watcher.on('error', (err) => log.warn({ err: String(err) }, 'session watcher error'));
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    ready,
    flush,
    close: async () => {
      if (timer) clearTimeout(timer);
      await watcher.close();
    },
  };
}

/**
 * The nearest existing folder above each root. Watching the root's parent (its other
 * children are ignored) sees a root that is created later; chokidar's own handling of a
 * path that does not exist yet misses events when several such roots share a parent.
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

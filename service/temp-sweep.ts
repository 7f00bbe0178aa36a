import { lstat, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Config } from './config.js';
import { UPLOAD_TEMP_NAME } from './files/upload-sink.js';
import type { Logger } from './log.js';
import { activeEnvFile } from './secrets/active-env.js';
import { ATOMIC_TEMP_NAME } from './stores/atomic.js';

/**
 * A kill -9 mid-write leaves the service's hidden temp files behind (the target itself is
 * always whole). At start-up they are removed from the folders the service writes its own
 * files in: only names the service itself makes (`.<name>.<12 hex>.tmp` of the atomic
 * writer, `.upload-<16 hex>.part` of an upload), only regular files, and only files last
 * modified before this process started, so nothing a running writer owns is touched.
 */
export async function sweepStaleTemps(config: Config, log: Logger): Promise<void> {
  const startedAt = performance.timeOrigin;
  let removed = 0;
  // All folders at once: one after the other, each listing waited behind the session index's
  // start-up work, and the listen waits for the sweep.
  for (const n of await Promise.all((await sweptFolders(config)).map((dir) => sweepFolder(dir, startedAt)))) removed += n;
  if (removed > 0) log.info({ removed }, 'removed stale temp files left by an earlier run');
}

/** The folders swept, as documented in docs/files.md ("Start-up sweep"). */
export async function sweptFolders(config: Config): Promise<string[]> {
  const { home, paths, projectsRoot } = config;
  const folders = [paths.runtimeaDir, path.dirname(paths.stateFile), paths.uploads];
  const envFile = await activeEnvFile(config).catch(() => undefined);
  if (envFile) folders.push(path.dirname(envFile));
  const checkpoints = config.checkpoints.dir;
  folders.push(checkpoints, path.join(checkpoints, 'turns'));
  const [clia, clib, projects, stores] = await Promise.all([subfolders(paths.cliaSpace), subfolders(path.join(home, 'clib-space')), subfolders(projectsRoot), subfolders(path.join(checkpoints, 'stores'))]);
  for (const store of stores) folders.push(path.join(checkpoints, 'stores', store));
  for (const agent of clia) folders.push(path.join(paths.cliaSpace, agent, 'sessions'));
  for (const agent of clib) folders.push(path.join(home, 'clib-space', agent, 'sessions'));
  for (const project of projects) folders.push(path.join(projectsRoot, project, '.space', 'sessions'));
  return [...new Set(folders)];
}

async function sweepFolder(dir: string, before: number): Promise<number> {
  let removed = 0;
  for (const name of await entries(dir)) {
    if (!ATOMIC_TEMP_NAME.test(name) && !UPLOAD_TEMP_NAME.test(name)) continue;
    const file = path.join(dir, name);
    const stats = await lstat(file).catch(() => undefined);
    if (!stats?.isFile() || stats.mtimeMs >= before) continue;
    if (await unlink(file).then(() => true, () => false)) removed++;
  }
  return removed;
}

async function subfolders(dir: string): Promise<string[]> {
  const found = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return found.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}

async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

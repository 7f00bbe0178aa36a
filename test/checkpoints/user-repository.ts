import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A user's own repository in a turn's directory, and what the safety net must leave exactly as
 * it was: `git status --porcelain`, `git stash list`, HEAD and the index's bytes.
 */
export interface RepoState {
  status: string;
  stash: string;
  head: string;
  index: string;
}

export const gitIn = (dir: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=u', '-c', 'user.email=u@x', ...args], { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, GIT_OPTIONAL_LOCKS: '0' }, encoding: 'utf8' });

export function repoState(dir: string): RepoState {
  return {
    status: gitIn(dir, 'status', '--porcelain'),
    stash: gitIn(dir, 'stash', 'list'),
    head: gitIn(dir, 'rev-parse', 'HEAD'),
    index: createHash('sha256').update(readFileSync(path.join(dir, '.git', 'index'))).digest('hex'),
  };
}

/** A repository with a commit, a stash, a staged change and an unstaged one (and an ignored node_modules/). */
export async function userRepository(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  gitIn(dir, 'init', '-q');
  await writeFile(path.join(dir, '.gitignore'), '.space/\nnode_modules/\n');
  await writeFile(path.join(dir, 'tracked.txt'), 'one\ntwo\nthree\n');
  await writeFile(path.join(dir, 'staged.txt'), 'base\n');
  gitIn(dir, 'add', '.gitignore', 'tracked.txt', 'staged.txt');
  gitIn(dir, 'commit', '-qm', 'init');
  await writeFile(path.join(dir, 'tracked.txt'), 'stashed change\n');
  gitIn(dir, 'stash', '-q');
  await writeFile(path.join(dir, 'staged.txt'), 'staged change\n');
  gitIn(dir, 'add', 'staged.txt');
  await writeFile(path.join(dir, 'tracked.txt'), 'one\ntwo\nthree\nuncommitted\n');
  await mkdir(path.join(dir, 'node_modules', 'dep'), { recursive: true });
  await writeFile(path.join(dir, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
}

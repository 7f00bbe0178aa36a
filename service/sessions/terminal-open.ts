import { readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { SessionView } from './merge.js';

/** A program that has the session open right now. */
export interface OpenSession {
  program: 'claude' | 'codex';
  pid: number;
}

/**
 * Whether a terminal session is open in a program right now (docs/history.md), so the app
 * does not resume it behind its back (neither program locks a session: two processes on one
 * id write two branches into one file).
 * - Claude Code: each running CLI records itself in `<config>/sessions/<pid>.json`
 *   `{pid, sessionId, cwd, startedAt}`; one naming the session whose process is alive.
 * - Codex: a running codex holds its rollout open; a process with the rollout among its open
 *   files (Linux `/proc/<pid>/fd`).
 * The service's own children (a turn it runs for this session) are not "open elsewhere".
 */
export async function openElsewhere(view: SessionView, claudeConfigDir: string): Promise<OpenSession | undefined> {
  if (view.agentName === 'clia_code') return claudeOpen(view.id, path.join(claudeConfigDir, 'sessions'));
  const rollouts = new Set(view.records.flatMap((r) => (r.source === 'clib-home' && r.log?.kind === 'file' ? [r.log.path] : [])));
  return rollouts.size > 0 ? codexOpen(rollouts) : undefined;
}

async function claudeOpen(id: string, dir: string): Promise<OpenSession | undefined> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const record = await readFile(path.join(dir, name), 'utf8').then((t) => JSON.parse(t) as { pid?: unknown; sessionId?: unknown }, () => undefined);
    if (record?.sessionId !== id || typeof record.pid !== 'number') continue;
    if (alive(record.pid) && !(await ours(record.pid))) return { program: 'claude', pid: record.pid };
  }
  return undefined;
}

async function codexOpen(rollouts: ReadonlySet<string>): Promise<OpenSession | undefined> {
  for (const pid of await pids()) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (rollouts.has(target) && !(await ours(pid))) return { program: 'codex', pid };
    }
  }
  return undefined;
}

async function pids(): Promise<number[]> {
  const names = await readdir('/proc').catch(() => [] as string[]);
  return names.filter((n) => /^\d+$/.test(n)).map(Number).filter((pid) => pid !== process.pid);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A descendant of this service (its own turn's program), by the parent chain in /proc. */
async function ours(pid: number): Promise<boolean> {
  let at = pid;
  for (let depth = 0; depth < 16 && at > 1; depth++) {
    const stat = await readFile(`/proc/${at}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(parent) || parent <= 0) return false;
    if (parent === process.pid) return true;
    at = parent;
  }
  return false;
}

import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { chown, readdir } from 'node:fs/promises';
import path from 'node:path';
import { which } from '../../service/process/which.js';
import { send, type RequestInit, type TestResponse } from './service.js';

/**
 * The real service (service/cli.ts) in its own process, for what an in-process service
 * cannot show: running as an unprivileged user, or under a file-size limit (RLIMIT_FSIZE,
 * which makes writes fail with EFBIG like a full disk would; Node ignores SIGXFSZ).
 */
export interface ChildService {
  port: number;
  pid: number;
  /** The exit code, once the process has ended. */
  exited: Promise<number | null>;
  request(method: string, target: string, init?: RequestInit): Promise<TestResponse>;
  post(target: string, body?: unknown): Promise<TestResponse>;
  stop(): Promise<void>;
  /** Everything it printed so far (for failure messages). */
  output(): string;
}

export interface ChildOptions {
  home: string;
  /** Run so that file modes apply to it (see `modesApply`); give it `home` with `chownTree` first. */
  user?: ModesUser;
  /** Largest file the process may write, in 512-byte blocks (`ulimit -f`). */
  fileSizeBlocks?: number;
  env?: Record<string, string>;
  /** The entry to run (default service/cli.ts). */
  entry?: string;
}

const root = path.resolve(import.meta.dirname, '../..');

export async function startChildService(options: ChildOptions): Promise<ChildService> {
  const entry = options.entry ?? 'service/cli.ts';
  // A built entry runs as `npm start` runs it: plain node, no TypeScript loader.
  const node = /\.m?js$/.test(entry) ? [process.execPath, entry] : [process.execPath, '--import', 'tsx', entry];
  const dropped = [...(options.user?.argv ?? []), ...node];
  const [command, ...args] =
    options.fileSizeBlocks === undefined ? dropped : ['sh', '-c', `ulimit -f ${options.fileSizeBlocks} && exec "$@"`, 'sh', ...dropped];
  const child = spawn(command!, args, {
    cwd: root,
    env: { PATH: process.env.PATH!, HOME: options.home, SPACE_PORT: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const port = await listeningPort(child, () => out);
  return {
    port,
    pid: child.pid!,
    exited,
    output: () => out,
    request: (method, target, init) => send(port, method, target, init),
    post: (target, body) => send(port, 'POST', target, { body }),
    stop: () => stop(child),
  };
}

function listeningPort(child: ChildProcess, output: () => string): Promise<number> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output());
      if (match) resolve(Number(match[1]));
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => reject(new Error(`service exited ${code}: ${output()}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** A user that file modes apply to: its ids (to give it a HOME) and the argv prefix that runs a program as it. */
export interface ModesUser {
  uid: number;
  gid: number;
  argv: string[];
}

/**
 * Permission bits do not stop root (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER). When the
 * suite runs as root, the service runs as the checkout's owner with every capability dropped
 * (setpriv: empty bounding and inheritable sets, no new privileges), so the owner's mode bits
 * bite it like any user's. Not another user such as `nobody`: that one may not enter the
 * checkout's parents (a clone in a 0700 folder, or under /root), nor read a clone made with
 * umask 077, nor reach a node installed under /root. The owner can always read its checkout.
 * Undefined when the suite does not run as root: modes already apply.
 */
export function modesApply(): ModesUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const setpriv = which('setpriv');
  if (!setpriv) throw new Error('setpriv (util-linux) is not installed: it drops root\'s capabilities so file modes apply');
  const { uid, gid } = statSync(root);
  const argv = [setpriv, `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs'];
  return { uid, gid, argv };
}

/** Gives a whole tree to the user `modesApply` runs the service as. */
export async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await chown(dir, uid, gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(p, uid, gid);
    else await chown(p, uid, gid);
  }
}

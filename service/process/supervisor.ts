import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { createRequire } from 'node:module';
import type { IPty } from 'node-pty';
import type { Logger } from '../log.js';
import type { ChildRecords } from './child-records.js';
import { which } from './which.js';

/**
 * Owns every subprocess the service starts. Each child leads its own process group
 * (spawned detached, never through a shell), so stopping it stops everything it forked:
 * SIGTERM to the group, then SIGKILL once the grace period is over.
 */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A process group the supervisor owns; its pid is the group id. */
export interface OwnedGroup {
  readonly pid: number;
  /** Settles when the group leader has exited. */
  readonly exited: Promise<ExitStatus>;
  stop(graceMs?: number): Promise<void>;
}

export interface OwnedProcess extends OwnedGroup {
  readonly child: ChildProcess;
}

export interface SpawnRequest {
  command: string;
  args: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  stdio?: SpawnOptions['stdio'];
}

/** A child on a pseudo-terminal (CLIs with a full-screen UI); it leads its own session and group. */
export interface OwnedPty extends OwnedGroup {
  readonly pty: IPty;
}

export interface PtyRequest {
  command: string;
  args: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  cols?: number;
  rows?: number;
}

const DEFAULT_GRACE_MS = 3000;
/** How long stop() waits for the leader's exit event once the group looks empty. */
const EXIT_EVENT_WAIT_MS = 2000;

export class Supervisor {
  private readonly owned = new Set<OwnedGroup>();
  /** Set while this turn of the event loop has made a fork; settles (and is cleared) at the next. */
  private forkedThisTurn: Promise<void> | undefined;

  /** `records`: where owned groups are written down, so a restart after a crash can stop them. */
  constructor(
    private readonly log: Logger,
    private readonly records?: ChildRecords,
  ) {}

  get size(): number {
    return this.owned.size;
  }

  /** Process group ids of every owned child (diagnostics and tests). */
  get groups(): number[] {
    return [...this.owned].map((o) => o.pid);
  }

  /** Starts a child in its own group. Rejects if the program cannot be started (ENOENT...). */
  async spawn(request: SpawnRequest): Promise<OwnedProcess> {
    // Forked in the caller's turn when it is the turn's first (a record is written in the same
    // turn: see ChildRecords.save), else in a later turn of its own.
    while (this.forkedThisTurn) await this.forkedThisTurn;
    this.claimForkTurn();
    const child = spawn(request.command, [...request.args], {
      cwd: request.cwd,
      env: request.env ?? {},
      stdio: request.stdio ?? ['pipe', 'pipe', 'pipe'],
      detached: true,
      shell: false,
      windowsHide: true,
    });
    const exited = new Promise<ExitStatus>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    // Owned, and written down, in the same turn as the fork (see ChildRecords.save); a
    // program that could not be started has no pid.
    const group = child.pid !== undefined ? this.adopt(child.pid, exited) : undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } catch (err) {
      await group?.stop(0);
      throw err;
    }
    const owned = { child, ...group! };
    this.log.debug({ pid: owned.pid, command: request.command }, 'child started');
    return owned;
  }

  /**
   * One fork per turn of the event loop. A fork holds the loop while the kernel copies the
   * service's page tables (20-90 ms each on a slow machine); fifty turns starting together
   * forked back to back and held every request behind them for over half a second.
   */
  private claimForkTurn(): void {
    this.forkedThisTurn = new Promise<void>((resolve) =>
      setImmediate(() => {
        this.forkedThisTurn = undefined;
        resolve();
      }),
    );
  }

  /**
   * Starts a child on a new pseudo-terminal. node-pty makes it a session leader (setsid), so
   * its pid is its process group, stopped like any other. A program not found on the
   * request's PATH throws ENOENT here: a pty child that cannot exec would only show up as
   * text on its screen.
   */
  spawnPty(request: PtyRequest): OwnedPty {
    const command = which(request.command, request.env?.PATH ?? '');
    if (!command) throw Object.assign(new Error(`spawn ${request.command} ENOENT`), { code: 'ENOENT' });
    const pty = nodePty().spawn(command, [...request.args], {
      name: 'xterm-256color',
      cols: request.cols ?? 120,
      rows: request.rows ?? 40,
      cwd: request.cwd,
      env: request.env ?? {},
    });
    const exited = new Promise<ExitStatus>((resolve) => {
      pty.onExit(({ exitCode, signal }) => resolve({ code: signal ? null : exitCode, signal: signal ? signalName(signal) : null }));
    });
    const owned = { pty, ...this.adopt(pty.pid, exited) };
    this.log.debug({ pid: owned.pid, command: request.command }, 'pty child started');
    return owned;
  }

  /** Stops every owned group (shutdown). */
  async stopAll(graceMs = DEFAULT_GRACE_MS): Promise<void> {
    await Promise.all([...this.owned].map((p) => p.stop(graceMs)));
  }

  private adopt(pid: number, exited: Promise<ExitStatus>): OwnedGroup {
    let stopping: Promise<void> | undefined;
    const forget = (): void => {
      if (this.owned.delete(owned)) this.records?.remove(pid);
    };
    const owned: OwnedGroup = {
      pid,
      exited,
      // The leader's exit event is awaited too (bounded): a multi-threaded program (Go's rclone,
      // gh) shows its main thread as a zombie while other threads still hold its sockets.
      stop: (graceMs = DEFAULT_GRACE_MS) =>
        (stopping ??= stopGroup(pid, graceMs)
          .then(() => Promise.race([exited, sleep(EXIT_EVENT_WAIT_MS)]))
          .then(() => undefined)
          .finally(forget)),
    };
    this.owned.add(owned);
    this.records?.add(pid);
    // The leader is gone but its group may live on; keep it owned until the group is empty.
    void exited.then(() => {
      if (!groupAlive(pid)) forget();
    });
    return owned;
  }
}

/**
 * SIGTERM to a process group, SIGKILL once `graceMs` is over. Also used for a group the
 * supervisor does not own (a gateway left behind by an earlier run of the service).
 */
export async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(25);
  if (groupAlive(pgid)) signalGroup(pgid, 'SIGKILL');
  const hardDeadline = Date.now() + 2000;
  while (groupAlive(pgid) && Date.now() < hardDeadline) await sleep(25);
}

let ptyModule: typeof import('node-pty') | undefined;

/**
 * node-pty is a native addon, loaded on first use: a build that does not load (wrong ABI)
 * fails the flows that need a terminal with EPTY, not the whole service at start-up.
 */
function nodePty(): typeof import('node-pty') {
  try {
    return (ptyModule ??= createRequire(import.meta.url)('node-pty') as typeof import('node-pty'));
  } catch (err) {
    throw Object.assign(new Error(`node-pty could not be loaded: ${(err as Error).message}`), { code: 'EPTY' });
  }
}

function signalName(signal: number): NodeJS.Signals | null {
  const entry = Object.entries(osConstants.signals).find(([, n]) => n === signal);
  return (entry?.[0] as NodeJS.Signals | undefined) ?? null;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

/**
 * Whether any live (non-zombie) process is still in the group. On Linux /proc tells us
 * directly, which also ignores zombies a non-reaping PID 1 may leave; elsewhere a
 * signal-0 probe is the best available answer.
 */
export function groupAlive(pgid: number): boolean {
  if (process.platform === 'linux') return livePidsInGroup(pgid).length > 0;
  return groupExists(pgid);
}

export function livePidsInGroup(pgid: number): number[] {
  // A group with no process at all (the usual case once a turn ends) is told by one signal-0
  // probe; only a group that exists needs the /proc walk, which fifty turns ending together
  // made cost the event loop over a second on a slow machine.
  if (!groupExists(pgid)) return [];
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') pids.push(Number(entry));
  }
  return pids;
}

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function readStat(pid: string): { state: string; pgrp: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0]!, pgrp: Number(rest[2]) };
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

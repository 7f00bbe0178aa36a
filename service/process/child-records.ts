import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../log.js';
import { tempPathFor } from '../stores/atomic.js';

/**
 * The process groups the service owns, on disk, so that a service killed without warning
 * (kill -9, a crash, power to the app cut) does not leave its agent programs running: the
 * next start stops every group still recorded. Each record names the group's leader by pid,
 * start time and boot, so a pid the kernel has since given to an unrelated process is never
 * signalled. Linux only (/proc); elsewhere nothing is recorded.
 */
export interface ChildRecord {
  pgid: number;
  /** The leader's start time, in clock ticks since boot (/proc/<pid>/stat field 22). */
  start: string;
  boot: string;
}

const LINUX = process.platform === 'linux';

export class ChildRecords {
  private readonly live = new Map<number, ChildRecord>();
  private folderMade = false;

  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  add(pgid: number): void {
    const start = startTimeOf(pgid);
    const boot = bootId();
    if (!LINUX || start === undefined || boot === undefined) return;
    this.live.set(pgid, { pgid, start, boot });
    this.save();
  }

  remove(pgid: number): void {
    if (this.live.delete(pgid)) this.save();
  }

  /**
   * Written synchronously, in the same turn of the event loop as the spawn: a kill -9 that
   * lands while an asynchronous write is under way (milliseconds, with its fsync) would leave
   * a program running that no later start knows of. Still whole (a temp file, then rename).
   * No fsync: the file only has to outlive the service's process, and a power cut or a crash
   * of the system ends the programs as well.
   */
  private save(): void {
    const temp = tempPathFor(this.file);
    try {
      if (!this.folderMade) mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      this.folderMade = true;
      writeFileSync(temp, `${JSON.stringify([...this.live.values()])}\n`, { mode: 0o600, flag: 'wx' });
      renameSync(temp, this.file);
    } catch (err) {
      try {
        unlinkSync(temp);
      } catch {
        // never written
      }
      this.log.warn({ err: String(err) }, 'could not record the child process groups');
    }
  }
}

/**
 * Stops every group an earlier run of the service recorded and did not stop (it was killed
 * or crashed), then forgets them. A group counts as that run's only if its leader is the
 * same process (pid, start time, boot), or the leader is gone but the group lives on (a
 * pid is never reused while a process group still carries it).
 */
export async function reapRecordedChildren(file: string, log: Logger, stopGroup: (pgid: number) => Promise<void>, membersOf: (pgid: number) => number[]): Promise<number> {
  if (!LINUX) return 0;
  let records: ChildRecord[];
  try {
    records = JSON.parse(await readFile(file, 'utf8')) as ChildRecord[];
  } catch {
    return 0; // no file (a clean stop), or one cut short: nothing trustworthy to act on
  }
  const boot = bootId();
  const own = ownGroup();
  let reaped = 0;
  for (const record of Array.isArray(records) ? records : []) {
    if (!Number.isInteger(record?.pgid) || record.pgid <= 1 || record.pgid === own || record.boot !== boot) continue;
    const leader = startTimeOf(record.pgid);
    const ours = leader === undefined ? membersOf(record.pgid).length > 0 : leader === record.start;
    if (!ours) continue;
    log.warn({ pgid: record.pgid }, 'stopping a process group left running by an earlier run of the service');
    await stopGroup(record.pgid);
    reaped++;
  }
  await unlink(file).catch(() => undefined);
  return reaped;
}

/** The service's own process group: never one to stop. */
function ownGroup(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

let boot: string | undefined;
function bootId(): string | undefined {
  try {
    return (boot ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
  } catch {
    return undefined;
  }
}

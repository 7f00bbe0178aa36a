import { statSync } from 'node:fs';
import { count, type ScanState } from './collect.js';
import type { Tracked } from './kept.js';
import type { LogUsage } from './types.js';

/** A log of a group that starts with the same model call (LogUsage.firstKey), with its scan state. */
export interface Copier {
  id: string;
  usage: LogUsage;
  state: ScanState;
}

/**
 * Claude Code copies a conversation's records into a new file when it forks it
 * (`--fork-session`) or hands it to a background session: the same message and request ids,
 * the same usage. ccusage counts a (message id, request id) pair once across all files; so
 * does this: within a group of logs that start with the same model call, a pair counted in
 * several logs is taken back from all but one, the log born first (`logs` is given newest
 * first). A pair taken back is kept in the log's `copies`, so that a later pass neither
 * takes it back again nor counts a later record of it. Answers the logs whose usage changed.
 */
export function takeBackCopies(logs: readonly Copier[]): string[] {
  const changed: string[] = [];
  logs.forEach((log, i) => {
    const others = logs.filter((_, j) => j !== i);
    let took = false;
    for (const [key, counted] of log.state.seen) {
      if (log.state.copies?.has(key) || !others.some((o) => counts(o.state, key))) continue;
      const row = log.usage.rows.get(counted.row);
      if (row) {
        count(row, counted.usage, counted.cost, -1);
        row.records -= 1;
      }
      (log.state.copies ??= new Set()).add(key);
      took = true;
    }
    if (took) changed.push(log.id);
  });
  return changed;
}

/**
 * The pairs a group's logs took back that no log of it counts any more (the log that counted
 * them is gone: deleted and not kept) count again, each in the log born first among those that
 * have it (`logs` newest first, as takeBackCopies). Answers the logs whose usage changed.
 */
export function giveBackOrphans(logs: readonly Copier[]): string[] {
  const changed: string[] = [];
  for (let i = logs.length - 1; i >= 0; i--) {
    const log = logs[i]!;
    let gave = false;
    for (const key of log.state.copies ?? []) {
      if (logs.some((o) => counts(o.state, key))) continue;
      const counted = log.state.seen.get(key);
      const row = counted && log.usage.rows.get(counted.row);
      if (row) {
        count(row, counted.usage, counted.cost, 1);
        row.records += 1;
      }
      log.state.copies!.delete(key);
      gave = true;
    }
    if (gave) changed.push(log.id);
  }
  return changed;
}

/** Whether a log counts a pair itself (it has it, and not as a copy of another's). */
function counts(state: ScanState, key: string): boolean {
  return state.seen.has(key) && !state.copies?.has(key);
}

/**
 * The store's logs (JSONL files) grouped by the model call they start with; in each group of
 * two or more, the copies taken back (takeBackCopies) from the log whose file was born first
 * on. `firstKeys`: only the groups that start with these. `lost`: groups that lost a log (any
 * size): what no log of them counts any more counts again first (giveBackOrphans). A member's
 * scan state is taken in hand (from the saved file when it is not). Answers the logs whose
 * usage changed.
 */
export function takeBackCopiesIn(tracked: ReadonlyMap<string, Tracked>, stateOf: (id: string, t: Tracked) => ScanState | undefined, firstKeys?: ReadonlySet<string>, lost: ReadonlySet<string> = new Set()): string[] {
  if (firstKeys?.size === 0 && lost.size === 0) return [];
  const groups = new Map<string, string[]>();
  for (const [id, t] of tracked) {
    const first = t.usage.firstKey;
    if (first === undefined || !t.file || (firstKeys && !firstKeys.has(first) && !lost.has(first))) continue;
    const group = groups.get(first);
    if (group) group.push(id);
    else groups.set(first, [id]);
  }
  const changed: string[] = [];
  for (const [first, ids] of groups) {
    if (ids.length < 2 && !lost.has(first)) continue;
    const logs = ids.flatMap((id) => {
      const t = tracked.get(id)!;
      const state = (t.state = stateOf(id, t));
      return state ? [{ id, usage: t.usage, state, born: statSync(id, { throwIfNoEntry: false })?.birthtimeMs ?? 0 }] : [];
    });
    logs.sort((a, b) => b.born - a.born || (a.id < b.id ? 1 : -1));
    if (lost.has(first)) changed.push(...giveBackOrphans(logs));
    changed.push(...takeBackCopies(logs));
  }
  return changed;
}

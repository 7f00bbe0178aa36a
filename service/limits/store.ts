import { AGENT_NAMES, type AgentName } from '../ids.js';
import type { RuntimeEvent } from '../runtimes/runtime.js';
import type { LimitReport, LimitWindowReport } from '../transcripts/limits.js';
import { mergeWindow, withStaleness, type LimitWindow } from './windows.js';

export type AccountKind = 'api_key' | 'subscription' | 'unknown';

/** One runtime's entry of `GET /api/limits` (docs/limits.md). */
export interface LimitsEntry {
  runtime: AgentName;
  account: { kind: AccountKind };
  windows: LimitWindow[];
  credits?: NonNullable<LimitReport['credits']>;
  state: 'ok' | 'warning' | 'limited' | 'unknown';
  reason?: string;
}

/** A window at or past this share of its limit warns (the program's own warning counts too). */
export const WARN_PERCENT = 80;

/** What the store tells the event channel. */
export interface LimitsListener {
  changed(entry: LimitsEntry): void;
  warning(runtime: AgentName, window: LimitWindow | undefined, entry: LimitsEntry): void;
}

interface Known {
  account?: 'api_key' | 'subscription';
  /** The account kind comes from the program's own stream (else from the service's records). */
  said?: boolean;
  windows: Map<string, LimitWindow>;
  credits?: NonNullable<LimitReport['credits']>;
  /** The program's own warning, until a report without it. */
  warned: boolean;
  /** A turn was refused for a limit: until when. */
  limitedUntil?: string;
  limitedSince?: string;
  /** Why nothing is known, as the program said it (OpenClaw's usage.status). */
  note?: string;
}

/** Why nothing is known, in plain words, per runtime and account. */
function unknownReason(runtime: AgentName, known: Known): string {
  if (runtime === 'clia_code') {
    if (known.account === 'api_key') return 'Claude Code reports plan windows only for subscription sign-ins (claude setup-token); this account uses an API key, which has no 5-hour or weekly windows to report.';
    if (known.account === 'subscription') return 'Claude Code has not reported a plan window yet: it sends one only when the figures change.';
    return 'No Claude Code turn has run since the service started, so its sign-in and plan windows are not known yet.';
  }
  if (runtime === 'clib') {
    if (known.account === 'api_key') return "Codex reports plan windows only for ChatGPT sign-ins; OpenAI's API sends none for API keys.";
    return 'No Codex turn has reported plan windows since the service started.';
  }
  return known.note ?? "OpenClaw's gateway has not been asked for its plan windows yet: it is asked (usage.status) once it runs, after a runtimea turn or when this list is read.";
}

/**
 * The plan limits each program reported during this run, merged (Codex sends sparse updates:
 * a window not in a report keeps its figures). Nothing is guessed: a runtime that reported
 * nothing is `unknown` with the reason. Kept in memory: a restart starts from unknown.
 */
export class LimitsStore {
  private readonly known = new Map<AgentName, Known>(AGENT_NAMES.map((n) => [n, { windows: new Map(), warned: false }]));
  /** Windows already warned about, by runtime:id:resets_at (once per window and period). */
  private readonly warnedWindows = new Set<string>();

  constructor(
    private readonly listener?: LimitsListener,
    private readonly now: () => number = Date.now,
  ) {}

  list(): LimitsEntry[] {
    return AGENT_NAMES.map((n) => this.entry(n));
  }

  entry(runtime: AgentName): LimitsEntry {
    const known = this.known.get(runtime)!;
    const now = this.now();
    const windows = [...known.windows.values()].map((w) => withStaleness(w, now)).sort((a, b) => a.window_minutes - b.window_minutes || a.id.localeCompare(b.id));
    const kind: AccountKind = known.account ?? (windows.length > 0 ? 'subscription' : 'unknown');
    const base = { runtime, account: { kind }, windows, ...(known.credits ? { credits: known.credits } : {}) };
    if (known.limitedUntil === undefined || Date.parse(known.limitedUntil) > now) {
      if (known.limitedSince) return { ...base, state: 'limited', reason: known.limitedUntil ? `A turn was refused for a plan limit; it lifts at ${known.limitedUntil}.` : 'A turn was refused for a plan limit.' };
    }
    if (windows.length === 0 && !known.warned) return { ...base, state: 'unknown', reason: unknownReason(runtime, known) };
    const warning = known.warned || windows.some((w) => !w.stale && (w.used_percent ?? 0) >= WARN_PERCENT);
    return { ...base, state: warning ? 'warning' : 'ok' };
  }

  /** How the program signs in as the service's records say, until its stream says (no event). */
  assumeAccount(runtime: AgentName, kind: 'api_key' | 'subscription'): void {
    const known = this.known.get(runtime)!;
    if (!known.said) known.account = kind;
  }

  /** What a turn's runtime event says about its program's limits. */
  observe(runtime: AgentName, event: RuntimeEvent): void {
    if (event.type !== 'limits') return;
    if (event.account) this.account(runtime, event.account);
    if (event.report) this.report(runtime, event.report);
  }

  /** How the program signs in, as its stream says. */
  account(runtime: AgentName, kind: 'api_key' | 'subscription'): void {
    const known = this.known.get(runtime)!;
    const switched = known.said && known.account !== kind;
    known.said = true;
    if (known.account === kind) return;
    known.account = kind;
    if (switched) {
      // Another sign-in: the windows were the other account's.
      known.windows.clear();
      known.warned = false;
      known.limitedSince = known.limitedUntil = undefined;
      delete known.credits;
    }
    this.listener?.changed(this.entry(runtime));
  }

  /** A program's report: windows merge over the known ones; a rejection marks the entry limited. */
  report(runtime: AgentName, report: LimitReport): void {
    const known = this.known.get(runtime)!;
    const before = JSON.stringify(this.entry(runtime));
    const observedAt = new Date(this.now()).toISOString();
    for (const w of report.windows) {
      const merged = mergeWindow(known.windows.get(windowKey(w)), w, observedAt);
      known.windows.set(merged.id, merged);
    }
    if (report.credits) known.credits = report.credits;
    if (report.status === 'rejected') {
      known.limitedSince = observedAt;
      known.limitedUntil = report.resetsAt ?? report.windows.find((w) => w.resetsAt)?.resetsAt ?? undefined;
    } else if (report.status !== undefined) {
      known.limitedSince = undefined;
      known.limitedUntil = undefined;
    }
    const programWarned = report.status === 'warning';
    if (report.status !== undefined) known.warned = programWarned;
    const entry = this.entry(runtime);
    if (JSON.stringify(entry) !== before) this.listener?.changed(entry);
    this.warn(runtime, entry, report, programWarned);
  }

  /**
   * A full account of the program's windows (OpenClaw's usage.status): they replace the known
   * ones; with none, the entry is unknown with `reason`. `limits-changed` only when something
   * other than the time it was observed changed.
   */
  snapshot(runtime: AgentName, snap: { windows: LimitWindowReport[]; account?: 'api_key' | 'subscription'; reason?: string; observedAt?: string }): void {
    const known = this.known.get(runtime)!;
    const before = sansObservedAt(this.entry(runtime));
    const observedAt = snap.observedAt ?? new Date(this.now()).toISOString();
    known.windows = new Map(snap.windows.map((w) => [windowKey(w), mergeWindow(undefined, w, observedAt)]));
    known.note = snap.reason;
    if (snap.account) known.account = snap.account;
    const entry = this.entry(runtime);
    if (sansObservedAt(entry) !== before) this.listener?.changed(entry);
    this.warn(runtime, entry, { windows: snap.windows }, false);
  }

  /** The program could not be asked: the reason shows while no window is known (known windows stay, with their observed_at). */
  unreported(runtime: AgentName, reason: string): void {
    const known = this.known.get(runtime)!;
    const before = JSON.stringify(this.entry(runtime));
    known.note = reason;
    const entry = this.entry(runtime);
    if (JSON.stringify(entry) !== before) this.listener?.changed(entry);
  }

  /** `limits-warning` once per window and period: past WARN_PERCENT, or the program's own warning. */
  private warn(runtime: AgentName, entry: LimitsEntry, report: LimitReport, programWarned: boolean): void {
    const reported = new Set(report.windows.map(windowKey));
    const hot = entry.windows.filter((w) => reported.has(w.id) && !w.stale && ((w.used_percent ?? 0) >= WARN_PERCENT || programWarned));
    if (programWarned && hot.length === 0) hot.push(...entry.windows.filter((w) => reported.has(w.id)));
    if (programWarned && hot.length === 0 && this.once(`${runtime}:program:${report.resetsAt ?? ''}`)) this.listener?.warning(runtime, undefined, entry);
    for (const w of hot) if (this.once(`${runtime}:${w.id}:${w.resets_at ?? ''}`)) this.listener?.warning(runtime, w, entry);
  }

  private once(key: string): boolean {
    if (this.warnedWindows.has(key)) return false;
    this.warnedWindows.add(key);
    return true;
  }
}

function sansObservedAt(entry: LimitsEntry): string {
  return JSON.stringify({ ...entry, windows: entry.windows.map(({ observed_at: _, ...w }) => w) });
}

function windowKey(w: { minutes: number; scope?: string }): string {
  return mergeWindow(undefined, { minutes: w.minutes, ...(w.scope ? { scope: w.scope } : {}), usedPercent: null, resetsAt: null }, '').id;
}

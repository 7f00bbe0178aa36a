import type { LimitWindowReport } from '../transcripts/limits.js';

/** One plan window as `GET /api/limits` answers it. */
export interface LimitWindow {
  id: string;
  label: string;
  window_minutes: number;
  used_percent: number | null;
  resets_at: string | null;
  observed_at: string;
  /** Its reset time has passed since it was observed: the figure is from the window before. */
  stale: boolean;
}

/** A window's name by its duration: 300 -> "5-hour", 10,080 -> "weekly"; a scoped one adds it: "weekly (Opus)". */
export function windowLabel(minutes: number, scope?: string): string {
  const base = minutes === 10_080 ? 'weekly' : minutes === 1_440 ? 'daily' : minutes === 43_200 || minutes === 44_640 ? 'monthly' : minutes % 1_440 === 0 ? `${minutes / 1_440}-day` : minutes % 60 === 0 ? `${minutes / 60}-hour` : `${minutes}-minute`;
  return scope ? `${base} (${scope})` : base;
}

/** A stable id from the label: "5-hour", "weekly", "weekly-opus". */
export function windowId(minutes: number, scope?: string): string {
  return windowLabel(minutes, scope)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** The report's window, merged over what was known: a field the report leaves out keeps its value. */
export function mergeWindow(known: LimitWindow | undefined, report: LimitWindowReport, observedAt: string): LimitWindow {
  return {
    id: windowId(report.minutes, report.scope),
    label: windowLabel(report.minutes, report.scope),
    window_minutes: report.minutes,
    used_percent: report.usedPercent ?? known?.used_percent ?? null,
    resets_at: report.resetsAt ?? known?.resets_at ?? null,
    observed_at: observedAt,
    stale: false,
  };
}

/** Marks a window whose reset time is behind `now` as stale. */
export function withStaleness(window: LimitWindow, now: number): LimitWindow {
  const stale = window.resets_at !== null && Date.parse(window.resets_at) <= now;
  return stale === window.stale ? window : { ...window, stale };
}

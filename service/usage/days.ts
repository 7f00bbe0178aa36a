import { DAY_MS } from './types.js';

/**
 * UTC calendar days as integers (days since 1970-01-01). Log times are ISO strings; most
 * share their date with the line before, so the date part is looked up, not parsed again.
 */
const byDate = new Map<string, number>();

/** The UTC day of an ISO time, or undefined when it is not one. */
export function dayOf(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  if (iso.length >= 10 && iso[4] === '-' && iso[7] === '-' && (iso.length === 10 || iso[10] === 'T') && iso.endsWith('Z')) {
    // Parsed the way Date parses it, so an overflowing date (02-30) lands where Date puts it.
    const date = iso.slice(0, 10);
    let day = byDate.get(date);
    if (day === undefined) {
      const ms = Date.parse(`${date}T00:00:00Z`);
      if (Number.isNaN(ms)) return undefined;
      day = Math.floor(ms / DAY_MS);
      if (byDate.size > 100_000) byDate.clear();
      byDate.set(date, day);
    }
    return day;
  }
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / DAY_MS);
}

/** Days a log's records may be dated after its last change (clocks set back, files copied across machines). */
const CLOCK_SLACK_DAYS = 2;

/**
 * Whether a log last changed at `mtimeMs` can hold nothing dated `sinceDay` or later: a
 * record is written after the time it carries, so its day is at most the file's (give or
 * take CLOCK_SLACK_DAYS). False when there is no `sinceDay` (all of history is wanted).
 */
export function endsBefore(mtimeMs: number, sinceDay: number | undefined): boolean {
  return sinceDay !== undefined && dayOfMs(mtimeMs) + CLOCK_SLACK_DAYS < sinceDay;
}

/** The first mtime (epoch ms) that does not end before `sinceDay`: endsBefore(m, d) is m < windowStartMs(d). */
export function windowStartMs(sinceDay: number | undefined): number {
  return sinceDay === undefined ? -Infinity : (sinceDay - CLOCK_SLACK_DAYS) * DAY_MS;
}

export function dayOfMs(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

const dates = new Map<number, string>();

/** YYYY-MM-DD of a day number. */
export function dateOf(day: number): string {
  let date = dates.get(day);
  if (date === undefined) {
    date = new Date(day * DAY_MS).toISOString().slice(0, 10);
    if (dates.size > 100_000) dates.clear();
    dates.set(day, date);
  }
  return date;
}

/** Whether a pass that read every log holding days from `read` on holds all from `wanted` on (undefined: all days). */
export function covers(read: number | undefined, wanted: number | undefined): boolean {
  return read === undefined || (wanted !== undefined && wanted >= read);
}

/** The window from the earlier of two first days (undefined: all days). */
export function widest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : Math.min(a, b);
}

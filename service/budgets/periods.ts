/**
 * A budget's period in UTC, as `/api/usage` counts its days: a day, an ISO week (from Monday
 * 00:00 UTC) or a calendar month. `key` names the period (for "once per threshold and period").
 */
export interface Period {
  key: string;
  startMs: number;
  endMs: number;
}

const DAY_MS = 86_400_000;

export function periodOf(period: 'day' | 'week' | 'month', nowMs: number): Period {
  const d = new Date(nowMs);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (period === 'day') return { key: new Date(day).toISOString().slice(0, 10), startMs: day, endMs: day + DAY_MS };
  if (period === 'week') {
    const start = day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
    return { key: `week-of-${new Date(start).toISOString().slice(0, 10)}`, startMs: start, endMs: start + 7 * DAY_MS };
  }
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { key: new Date(start).toISOString().slice(0, 7), startMs: start, endMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

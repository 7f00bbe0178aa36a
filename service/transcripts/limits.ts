import { isObject, str, type Json } from './common.js';

/**
 * The programs' plan-limit reports, in neutral terms (docs/limits.md). Windows are named by
 * their duration, never by the program's slot (`primary`, `five_hour`): Codex puts a Plus
 * account's weekly window in `primary`.
 */
export interface LimitWindowReport {
  minutes: number;
  /** A window that counts only some models ("Opus"). */
  scope?: string;
  /** 0-100; null when the program named the window without a figure. */
  usedPercent: number | null;
  resetsAt: string | null;
}

export interface LimitReport {
  /** Windows in this report; a window not in it keeps its last figures (reports are sparse). */
  windows: LimitWindowReport[];
  /** The program's verdict: `warning` is its own warning, `rejected` a turn refused for a limit. */
  status?: 'allowed' | 'warning' | 'rejected';
  /** When a rejected limit lifts. */
  resetsAt?: string;
  credits?: { has_credits: boolean | null; unlimited: boolean | null; balance: string | null };
}

/** Claude Code's `rateLimitType`s: the window each one is. */
const CLIA_TYPES: Readonly<Record<string, { minutes: number; scope?: string }>> = {
  five_hour: { minutes: 300 },
  seven_day: { minutes: 10_080 },
  seven_day_opus: { minutes: 10_080, scope: 'Opus' },
  seven_day_sonnet: { minutes: 10_080, scope: 'Sonnet' },
  seven_day_overage_included: { minutes: 10_080, scope: 'overage included' },
};

/**
 * Claude Code's stream line `{"type":"rate_limit_event","rate_limit_info":{status, resetsAt
 * (unix s), rateLimitType, utilization (a fraction), surpassedThreshold, ...}}`, which it sends
 * for subscription logins only, when the `anthropic-ratelimit-unified-*` headers change.
 */
export function cliaRateLimitEvent(record: unknown): LimitReport | undefined {
  if (!isObject(record) || record.type !== 'rate_limit_event' || !isObject(record.rate_limit_info)) return undefined;
  const info = record.rate_limit_info;
  const resetsAt = unixTime(info.resetsAt);
  const type = CLIA_TYPES[str(info.rateLimitType) ?? ''];
  const status = info.status === 'rejected' ? 'rejected' : info.status === 'allowed_warning' ? 'warning' : info.status === 'allowed' ? 'allowed' : undefined;
  const used = typeof info.utilization === 'number' ? round(info.utilization * 100) : null;
  const windows = type ? [{ minutes: type.minutes, ...(type.scope ? { scope: type.scope } : {}), usedPercent: used ?? (status === 'rejected' ? 100 : null), resetsAt: resetsAt ?? null }] : [];
  return { windows, ...(status ? { status } : {}), ...(status === 'rejected' && resetsAt ? { resetsAt } : {}) };
}

/** Claude Code's `system/init` `apiKeySource`: `none` when it signs in with an OAuth (subscription) token. */
export function cliaAccountKind(record: unknown): 'api_key' | 'subscription' | undefined {
  if (!isObject(record) || record.type !== 'system' || record.subtype !== 'init' || typeof record.apiKeySource !== 'string') return undefined;
  return record.apiKeySource === 'none' ? 'subscription' : 'api_key';
}

/**
 * A Codex rate-limit snapshot: app-server's `account/rateLimits/updated` / `read`
 * (`{primary, secondary: {usedPercent, windowDurationMins, resetsAt}, credits, rateLimitReachedType}`)
 * or a rollout's `token_count.rate_limits` (the same in snake_case). Codex fills it from the
 * provider's `x-codex-primary-*` / `x-codex-secondary-*` headers; a null slot is "not reported".
 */
export function codexRateLimits(snapshot: unknown): LimitReport | undefined {
  if (!isObject(snapshot)) return undefined;
  const windows = [snapshot.primary, snapshot.secondary].flatMap((w) => (isObject(w) ? codexWindow(w) : []));
  const reached = snapshot.rateLimitReachedType ?? snapshot.rate_limit_reached_type;
  const credits = isObject(snapshot.credits) ? codexCredits(snapshot.credits) : undefined;
  if (windows.length === 0 && !reached && !credits) return undefined;
  const full = windows.find((w) => (w.usedPercent ?? 0) >= 100);
  return {
    windows,
    ...(reached ? { status: 'rejected' as const, ...(full?.resetsAt ? { resetsAt: full.resetsAt } : {}) } : {}),
    ...(credits ? { credits } : {}),
  };
}

function codexWindow(w: Json): LimitWindowReport[] {
  const minutes = w.windowDurationMins ?? w.window_minutes;
  if (typeof minutes !== 'number' || minutes <= 0) return [];
  const used = w.usedPercent ?? w.used_percent;
  return [{ minutes, usedPercent: typeof used === 'number' ? round(used) : null, resetsAt: unixTime(w.resetsAt ?? w.resets_at) ?? null }];
}

function codexCredits(c: Json): LimitReport['credits'] {
  const has = c.hasCredits ?? c.has_credits;
  const balance = c.balance;
  return { has_credits: typeof has === 'boolean' ? has : null, unlimited: typeof c.unlimited === 'boolean' ? c.unlimited : null, balance: typeof balance === 'string' ? balance : typeof balance === 'number' ? String(balance) : null };
}

/** Unix seconds (or ms, as some peers saw) as ISO. */
export function unixTime(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return undefined;
  return new Date(value < 1e12 ? value * 1000 : value).toISOString();
}

export const round = (n: number): number => Math.round(n * 10) / 10;

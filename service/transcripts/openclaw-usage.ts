import { isObject, str } from './common.js';
import { round, unixTime, type LimitWindowReport } from './limits.js';

/** What OpenClaw's `usage.status` says about the plan windows, in neutral terms. */
export interface OpenclawUsage {
  windows: LimitWindowReport[];
  /** A provider that reports windows is signed in with a subscription (its usage endpoint takes OAuth only). */
  account?: 'subscription';
  /** Why no window is known, in plain words (set when `windows` is empty). */
  reason?: string;
  /** When OpenClaw read its providers (its `updatedAt`). */
  observedAt?: string;
}

/**
 * OpenClaw's labels (2026.9.6 `provider-usage.fetch.*`) and the durations they stand for:
 * Claude `5h` / `Week` (`five_hour`, `seven_day`) and `Sonnet` / `Opus` (the weekly model
 * windows), Codex `<n>h` / `Day` / `Week`, z.ai `Monthly`. Others (Gemini `Pro`, a Claude
 * model limit, `Extra usage`) state no duration and are left out, never guessed.
 */
function durationOf(label: string): { minutes: number; scope?: string } | undefined {
  const hours = /^(\d+)h$/i.exec(label)?.[1];
  if (hours) return { minutes: Number(hours) * 60 };
  const fixed: Record<string, { minutes: number; scope?: string }> = {
    day: { minutes: 1_440 },
    week: { minutes: 10_080 },
    monthly: { minutes: 43_200 },
    sonnet: { minutes: 10_080, scope: 'Sonnet' },
    opus: { minutes: 10_080, scope: 'Opus' },
  };
  return fixed[label.toLowerCase()];
}

/**
 * The answer of OpenClaw's gateway RPC `usage.status`: `{updatedAt (ms), providers:
 * [{provider, displayName, windows: [{label, usedPercent, resetAt (ms)}], plan?, error?}]}`.
 * OpenClaw asks each provider's usage endpoint with the credential it holds; API keys and
 * custom providers have none, so it lists no provider for them. Windows of several providers
 * carry the provider's name in their scope ("5-hour (Claude)").
 */
export function openclawUsageStatus(answer: unknown): OpenclawUsage {
  const providers = isObject(answer) && Array.isArray(answer.providers) ? answer.providers.filter(isObject) : [];
  const observedAt = isObject(answer) ? unixTime(answer.updatedAt) : undefined;
  const reporting = providers.filter((p) => Array.isArray(p.windows) && p.windows.length > 0);
  const named = reporting.length > 1;
  const windows = reporting.flatMap((p) => (p.windows as unknown[]).flatMap((w) => windowOf(w, named ? (str(p.displayName) ?? str(p.provider)) : undefined)));
  const at = observedAt ? { observedAt } : {};
  if (windows.length > 0) return { windows, account: 'subscription', ...at };
  return { windows, reason: reasonOf(providers, reporting.length > 0), ...at };
}

function windowOf(w: unknown, provider: string | undefined): LimitWindowReport[] {
  if (!isObject(w) || typeof w.label !== 'string') return [];
  const duration = durationOf(w.label.trim());
  if (!duration) return [];
  const scope = [provider, duration.scope].filter(Boolean).join(' ');
  return [{ minutes: duration.minutes, ...(scope ? { scope } : {}), usedPercent: typeof w.usedPercent === 'number' ? round(w.usedPercent) : null, resetsAt: unixTime(w.resetAt) ?? null }];
}

function reasonOf(providers: Record<string, unknown>[], unnamed: boolean): string {
  const failed = providers.filter((p) => typeof p.error === 'string').map((p) => `${str(p.displayName) ?? str(p.provider) ?? 'a provider'}: ${p.error as string}`);
  if (failed.length > 0) return `OpenClaw could not read its providers' plan windows (${failed.join('; ')}).`;
  if (unnamed) return 'OpenClaw reported usage figures without a window length (such as a model quota), which are not shown as plan windows.';
  return 'OpenClaw reported no plan windows: none of its providers is signed in with a subscription that has a usage endpoint (API keys and custom providers have no 5-hour or weekly windows).';
}

import { describe, expect, it } from 'vitest';
import { createLogger } from '../../service/log.js';
import { RuntimeaUsage } from '../../service/limits/runtimea-usage.js';
import { LimitsStore, type LimitsEntry } from '../../service/limits/store.js';

/**
 * OpenClaw's usage.status answers (the shape of 2026.9.6 `loadProviderUsageSummary`, as the
 * real gateway sends it in test/limits/real-openclaw.test.ts) mapped to the runtimea entry:
 * the cases the real lane cannot reach (several providers, Codex's labels, a failed fetch).
 */
const at = Date.parse('2026-11-28T12:00:00Z');
const reset = at + 3 * 3_600_000;
const log = createLogger('silent');

function asked(answers: unknown[]): { store: LimitsStore; usage: RuntimeaUsage; changes: LimitsEntry[]; warnings: string[] } {
  const changes: LimitsEntry[] = [];
  const warnings: string[] = [];
  const store = new LimitsStore({ changed: (e) => changes.push(e), warning: (_r, w) => warnings.push(w?.label ?? '') }, () => at);
  let n = 0;
  const usage = new RuntimeaUsage(store, async () => {
    const a = answers[Math.min(n++, answers.length - 1)];
    if (a instanceof Error) throw a;
    return a;
  }, log, 60_000, () => at);
  return { store, usage, changes, warnings };
}

describe('runtimea limits from usage.status', () => {
  it('several providers: windows by duration with the provider named; a model quota without a length left out', async () => {
    const { store, usage, warnings } = asked([{
      updatedAt: at,
      providers: [
        { provider: 'anthropic', displayName: 'Claude', windows: [{ label: '5h', usedPercent: 40, resetAt: reset }, { label: 'Sonnet', usedPercent: 90 }] },
        { provider: 'openai', displayName: 'OpenAI', plan: 'plus', windows: [{ label: '168h', usedPercent: 12.34, resetAt: reset }] },
        { provider: 'google-gemini-cli', displayName: 'Gemini', windows: [{ label: 'Pro', usedPercent: 50 }] },
      ],
    }]);
    await usage.refresh();
    const entry = store.entry('runtimea');
    expect(entry).toMatchObject({ account: { kind: 'subscription' }, state: 'warning' });
    expect(entry.windows.map((w) => [w.label, w.window_minutes, w.used_percent, w.resets_at])).toEqual([
      ['5-hour (Claude)', 300, 40, new Date(reset).toISOString()],
      ['weekly (Claude Sonnet)', 10_080, 90, null],
      ['weekly (OpenAI)', 10_080, 12.3, new Date(reset).toISOString()],
    ]);
    expect(entry.windows[0]!.observed_at).toBe(new Date(at).toISOString());
    expect(warnings).toEqual(['weekly (Claude Sonnet)']);
  });

  it("a failed fetch: unknown with OpenClaw's error; a gateway that does not answer: unknown with why; a later answer replaces the windows", async () => {
    const { store, usage, changes } = asked([
      { updatedAt: at, providers: [{ provider: 'anthropic', displayName: 'Claude', windows: [], error: 'HTTP 403: OAuth token does not meet scope requirement user:profile' }] },
    ]);
    await usage.refresh();
    expect(store.entry('runtimea')).toEqual({ runtime: 'runtimea', account: { kind: 'unknown' }, windows: [], state: 'unknown', reason: "OpenClaw could not read its providers' plan windows (Claude: HTTP 403: OAuth token does not meet scope requirement user:profile)." });
    expect(changes).toHaveLength(1);

    const down = asked([new Error('The runtimea gateway did not answer usage.status within 15 s')]);
    await down.usage.refresh();
    expect(down.store.entry('runtimea').reason).toBe('The runtimea gateway did not answer usage.status, so its plan windows are not known (The runtimea gateway did not answer usage.status within 15 s).');

    const later = asked([{ providers: [{ provider: 'openai', displayName: 'OpenAI', windows: [{ label: '5h', usedPercent: 10 }, { label: 'Week', usedPercent: 20 }] }] }, { providers: [{ provider: 'openai', displayName: 'OpenAI', windows: [{ label: 'Week', usedPercent: 25 }] }] }]);
    await later.usage.refresh();
    await later.usage.refresh();
    expect(later.store.entry('runtimea').windows.map((w) => [w.id, w.used_percent])).toEqual([['weekly', 25]]);
  });

  it('not asked while the gateway is not running; asked again only once the last answer is older than the TTL', async () => {
    let asks = 0;
    let now = at;
    const store = new LimitsStore(undefined, () => now);
    let running = false;
    const usage = new RuntimeaUsage(store, async () => (asks++, running ? { updatedAt: now, providers: [] } : undefined), log, 60_000, () => now);
    await usage.freshen(1000);
    expect(store.entry('runtimea').reason).toMatch(/has not been asked/);
    running = true;
    await usage.freshen(1000);
    await usage.freshen(1000);
    expect(asks).toBe(2);
    expect(store.entry('runtimea').reason).toMatch(/^OpenClaw reported no plan windows/);
    now += 61_000;
    await usage.freshen(1000);
    expect(asks).toBe(3);
  });
});

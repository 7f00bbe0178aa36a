import { describe, expect, it } from 'vitest';
import { LimitsStore, type LimitsEntry } from '../../service/limits/store.js';
import { windowLabel } from '../../service/limits/windows.js';

/** The limits store's merge, staleness and warnings, on a clock the test moves (docs/limits.md). */
describe('LimitsStore', () => {
  it('names windows by duration, never by slot', () => {
    expect([300, 10_080, 1_440, 60, 90, 43_200].map((m) => windowLabel(m))).toEqual(['5-hour', 'weekly', 'daily', '1-hour', '90-minute', 'monthly']);
    expect(windowLabel(10_080, 'Opus')).toBe('weekly (Opus)');
  });

  it('a window past its reset is stale and no longer warns; a warning is sent once per window and period', () => {
    let now = Date.parse('2026-11-28T12:00:00Z');
    const warnings: Array<string | undefined> = [];
    const changes: LimitsEntry[] = [];
    const store = new LimitsStore({ changed: (e) => changes.push(e), warning: (_r, w) => warnings.push(w?.id) }, () => now);
    const resetsAt = '2026-11-28T14:00:00.000Z';
    store.report('clib', { windows: [{ minutes: 300, usedPercent: 85, resetsAt }] });
    store.report('clib', { windows: [{ minutes: 300, usedPercent: 90, resetsAt }] });
    expect(warnings).toEqual(['5-hour']);
    expect(store.entry('clib')).toMatchObject({ state: 'warning', windows: [{ used_percent: 90, stale: false }] });
    now = Date.parse('2026-11-28T14:30:00Z');
    expect(store.entry('clib')).toMatchObject({ state: 'ok', windows: [{ used_percent: 90, stale: true }] });
    store.report('clib', { windows: [{ minutes: 300, usedPercent: 81, resetsAt: '2026-11-28T19:00:00.000Z' }] });
    expect(warnings).toEqual(['5-hour', '5-hour']);
    expect(changes.length).toBeGreaterThan(1);
  });

  it("a rejection is limited until its reset; a new sign-in of another kind forgets the other account's windows", () => {
    let now = Date.parse('2026-11-28T12:00:00Z');
    const store = new LimitsStore(undefined, () => now);
    store.account('clia_code', 'subscription');
    store.report('clia_code', { windows: [{ minutes: 300, usedPercent: 100, resetsAt: '2026-11-28T13:00:00.000Z' }], status: 'rejected', resetsAt: '2026-11-28T13:00:00.000Z' });
    expect(store.entry('clia_code')).toMatchObject({ state: 'limited', reason: 'A turn was refused for a plan limit; it lifts at 2026-11-28T13:00:00.000Z.' });
    now = Date.parse('2026-11-28T13:01:00Z');
    expect(store.entry('clia_code').state).toBe('ok');
    store.account('clia_code', 'api_key');
    expect(store.entry('clia_code')).toMatchObject({ account: { kind: 'api_key' }, windows: [], state: 'unknown' });
  });
});

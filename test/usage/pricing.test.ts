import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Pricer } from '../../service/usage/collect.js';
import { dayOf } from '../../service/usage/days.js';
import { percentiles } from '../../service/usage/percentile.js';
import { normalizeModel, PriceDocument, priceKey, priceTable } from '../../service/usage/pricing.js';
import { FIXTURES } from '../sessions/fixtures.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const builtin = PriceDocument.parse(JSON.parse(readFileSync(path.join(ROOT, 'config', 'usage', 'prices.json'), 'utf8')));
const pricer = new Pricer(priceTable(builtin));
const day = (date: string): number => dayOf(`${date}T12:00:00.000Z`)!;
const tokens = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({ input, output, cacheRead, cacheWrite });

describe('the built-in price table', () => {
  it('is dated and covers every model the runtimes offer, except the one with no published price', () => {
    expect(builtin.as_of).toBe('2026-11-21');
    const table = priceTable(builtin);
    const offered = readdirSync(path.join(ROOT, 'config', 'agents')).flatMap((backend) => (JSON.parse(readFileSync(path.join(ROOT, 'config', 'agents', backend, 'commands.json'), 'utf8')).models as Array<{ id: string }>).map((m) => m.id));
    expect(offered.length).toBeGreaterThan(10);
    expect(offered.filter((id) => priceKey(table, id) === undefined)).toEqual(['claude-fable-5-2']);
  });

  it("agrees with Claude Code's own cost of every recorded turn (claude-opus-5-5)", () => {
    let turns = 0;
    for (const name of readdirSync(path.join(FIXTURES, 'clia')).filter((n) => n.endsWith('.stdout.jsonl'))) {
      for (const line of readFileSync(path.join(FIXTURES, 'clia', name), 'utf8').split('\n').filter(Boolean)) {
        const record = JSON.parse(line);
        if (record.type !== 'result') continue;
        for (const [model, u] of Object.entries<any>(record.model_usage_since_last_result ?? {})) {
          turns++;
          const ours = pricer.cost(model, day('2026-11-21'), tokens(u.inputTokens, u.outputTokens, u.cacheReadInputTokens, u.cacheCreationInputTokens));
          expect(ours, `${name} ${model}`).toBeCloseTo(u.costUSD, 9);
        }
      }
    }
    expect(turns).toBeGreaterThanOrEqual(6);
  });

  it('prices a long prompt whole at the long-context rate (Anthropic above 200k, OpenAI above 272k, Haiku 5.5 above 100k)', () => {
    // claude-sonnet-4-5, prompt 150k: 150000*3e-6 + 1000*1.5e-5.
    expect(pricer.cost('claude-sonnet-4-5', day('2026-11-01'), tokens(150_000, 1000))).toBeCloseTo(0.465, 9);
    // prompt 240k + 20k cache read = 260k > 200k: 240000*6e-6 + 20000*6e-7 + 1000*2.25e-5.
    expect(pricer.cost('claude-sonnet-4-5', day('2026-11-01'), tokens(240_000, 1000, 20_000))).toBeCloseTo(1.4745, 9);
    // gpt-5.5, 300k input: 2x input, 1.5x output: 300000*1e-5 + 100*4.5e-5.
    expect(pricer.cost('gpt-5.5', day('2026-11-01'), tokens(300_000, 100))).toBeCloseTo(3.0045, 9);
    expect(pricer.cost('gpt-5.5', day('2026-11-01'), tokens(272_000, 100))).toBeCloseTo(272_000 * 5e-6 + 100 * 3e-5, 9);
    // claude-haiku-5-5 above 100k: 0.50/M in, 2.50/M out.
    expect(pricer.cost('claude-haiku-5-5', day('2026-11-01'), tokens(100_001, 10))).toBeCloseTo(100_001 * 5e-7 + 10 * 2.5e-6, 12);
  });

  it('prices a record at the rate in force on its day (claude-sonnet-5-5 cache reads cut on 2026-10-07)', () => {
    expect(pricer.cost('claude-sonnet-5-5', day('2026-10-06'), tokens(0, 0, 1_000_000))).toBeCloseTo(0.2, 12);
    expect(pricer.cost('claude-sonnet-5-5', day('2026-10-07'), tokens(0, 0, 1_000_000))).toBeCloseTo(0.1, 12);
    // gpt-5.6-luna before and after the cut of 2026-07-30.
    expect(pricer.cost('gpt-5.6-luna', day('2026-07-29'), tokens(100_000, 0))).toBeCloseTo(0.1, 12);
    expect(pricer.cost('gpt-5.6-luna', day('2026-07-30'), tokens(100_000, 0))).toBeCloseTo(0.02, 12);
  });

  it('finds models by the names logs use, and nothing by resemblance', () => {
    expect(normalizeModel('anthropic/claude-opus-5-5')).toBe('claude-opus-5-5');
    expect(normalizeModel('openrouter/openai/GPT-6.1-Sol')).toBe('gpt-6.1-sol');
    expect(normalizeModel('claude-sonnet-4-5-20250929')).toBe('claude-sonnet-4-5');
    expect(normalizeModel('claude-opus-4-6@20260101')).toBe('claude-opus-4-6');
    expect(normalizeModel('claude-opus-4-6[1m]')).toBe('claude-opus-4-6');
    const table = priceTable(builtin);
    expect(priceKey(table, 'openai/gpt-6-luna')).toBe('gpt-6-luna');
    expect(priceKey(table, 'claude-sonnet-5-5-turbo')).toBeUndefined();
    expect(priceKey(table, 'fake-model')).toBeUndefined();
    expect(pricer.cost('fake-model', day('2026-11-01'), tokens(1, 1))).toBeUndefined();
  });

  it('an override entry replaces the model whole; missing cache rates default to 1.25x and 0.1x input', () => {
    const table = priceTable(builtin, PriceDocument.parse({ models: { 'claude-opus-5-5': { input_cost_per_token: 1e-6, output_cost_per_token: 2e-6 } } }));
    const p = new Pricer(table);
    // 1000*1e-6 + 1000*2e-6 + 1000*1e-7 + 1000*1.25e-6
    expect(p.cost('claude-opus-5-5', day('2026-11-01'), tokens(1000, 1000, 1000, 1000))).toBeCloseTo(0.00435, 12);
    expect(p.cost('claude-opus-4-5', day('2026-11-01'), tokens(1000, 0))).toBeCloseTo(0.005, 12);
  });
});

describe('percentiles', () => {
  it('match nearest rank on a sorted copy', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const n of [1, 2, 3, 10, 99, 1000, 12_345]) {
      const values = Array.from({ length: n }, () => Math.floor(rand() * 5000) + (rand() < 0.3 ? 1000 : 0));
      const sorted = [...values].sort((a, b) => a - b);
      const expected = [50, 95, 99].map((p) => sorted[Math.ceil((p / 100) * n) - 1]);
      expect(percentiles(values, [50, 95, 99])).toEqual(expected);
    }
    expect(percentiles([], [50])).toEqual([undefined]);
  });
});

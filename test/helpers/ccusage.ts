import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';

/** `ccusage claude daily` (the real binary, offline, UTC days) over the Claude Code history of `home`. */
export function ccusageClaudeDaily(bin: string, home: string): any {
  const ran = spawnSync(bin, ['claude', 'daily', '--json', '--offline', '--timezone', 'UTC'], { env: { PATH: process.env.PATH, HOME: home }, encoding: 'utf8' });
  expect(ran.status, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout);
}

/** The service's `/api/usage` report holds ccusage's tokens per day and per model, to the token. */
export function expectSameAsCcusage(ours: any, cc: any): void {
  for (const day of cc.daily) expect(ours.daily.find((d: any) => d.date === day.date)?.tokens_total, day.date).toBe(day.totalTokens);
  const models = new Map<string, any>();
  for (const day of cc.daily) for (const m of day.modelBreakdowns) models.set(m.modelName, m);
  expect(ours.by_model.map((m: any) => [m.model, m.tokens_in, m.tokens_out, m.cache_read, m.cache_write]).sort()).toEqual(
    [...models.values()].map((m) => [m.modelName, m.inputTokens, m.outputTokens, m.cacheReadTokens, m.cacheCreationTokens]).sort(),
  );
}

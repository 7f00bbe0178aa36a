import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

/** /api/budgets and /api/limits over HTTP without a turn (docs/limits.md): validation, the store, the unknown states. */
let home: string;
let svc: TestService;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'budgets-api-'));
  await mkdir(path.join(home, '.runtimea'), { recursive: true });
  await writeFile(path.join(home, '.runtimea', '.env'), 'CLIA_CODE_OAUTH_TOKEN=sk-ant-oat01-x\n', { mode: 0o600 });
  svc = await startService({ home });
});
afterAll(async () => {
  await svc?.close();
  await rm(home, { recursive: true, force: true });
});

const put = (id: string, body: unknown) => svc.request('PUT', `/api/budgets/${id}`, { body });

describe('/api/budgets', () => {
  it('refuses bad values with 400 {detail} naming the field, and writes nothing', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['b', [], 'Body must be an object with scope, period and limit_usd'],
      ['b', { period: 'day', limit_usd: 1 }, 'scope must be "all", a runtime name or an agent_id'],
      ['b', { scope: 'all', period: 'year', limit_usd: 1 }, 'period must be one of day, week, month'],
      ['b', { scope: 'all', period: 'day', limit_usd: 0 }, 'limit_usd must be a number above 0'],
      ['b', { scope: 'all', period: 'day', limit_usd: '5' }, 'limit_usd must be a number above 0'],
      ['b', { scope: 'all', period: 'day', limit_usd: 1, warn_at: [] }, 'warn_at must be a list of 1 to 10 fractions above 0 (1.0 is the limit)'],
      ['b', { scope: 'all', period: 'day', limit_usd: 1, warn_at: [0.5, -1] }, 'warn_at must be a list of 1 to 10 fractions above 0 (1.0 is the limit)'],
      ['b', { scope: 'all', period: 'day', limit_usd: 1, action: 'stop' }, 'action must be one of notify, hold_new_turns'],
      ['bad%20id', { scope: 'all', period: 'day', limit_usd: 1 }, 'Budget id must be 1-64 letters, digits, ".", "_" or "-"'],
    ];
    for (const [id, body, detail] of cases) {
      const res = await put(id, body);
      expect([res.status, res.json()]).toEqual([400, { detail }]);
    }
    expect((await svc.get('/api/budgets')).json()).toEqual({ budgets: [] });
    await expect(stat(path.join(home, '.space-state', 'budgets.json'))).rejects.toThrow();
  });

  it('stores a budget atomically (0600), answers its spend and period, keeps it across a restart; DELETE removes it', async () => {
    const res = await put('weekly-all', { scope: 'all', period: 'week', limit_usd: 25, warn_at: [1, 0.5] });
    expect(res.status).toBe(200);
    const monday = new Date();
    monday.setUTCHours(0, 0, 0, 0);
    monday.setUTCDate(monday.getUTCDate() - ((monday.getUTCDay() + 6) % 7));
    expect(res.json()).toMatchObject({
      id: 'weekly-all', scope: 'all', period: 'week', limit_usd: 25, warn_at: [0.5, 1], action: 'notify',
      period_start: monday.toISOString(), resets_at: new Date(monday.getTime() + 7 * 86_400_000).toISOString(),
      spent_usd: 0, projected_usd: 0, basis: 'list_price_estimate', state: 'ok',
    });
    const file = path.join(home, '.space-state', 'budgets.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8')).budgets['weekly-all']).toMatchObject({ scope: 'all', limit_usd: 25 });
    await svc.close();
    svc = await startService({ home });
    expect((await svc.get('/api/budgets')).json().budgets.map((b: { id: string }) => b.id)).toEqual(['weekly-all']);
    expect((await svc.request('DELETE', '/api/budgets/weekly-all')).json()).toEqual({ ok: true });
    const gone = await svc.request('DELETE', '/api/budgets/weekly-all');
    expect([gone.status, gone.json()]).toEqual([404, { detail: 'Budget not found' }]);
  });
});

describe('/api/limits before any turn', () => {
  it('one entry per runtime, unknown with the reason in plain words, never a number', async () => {
    const { limits } = (await svc.get('/api/limits')).json();
    expect(limits.map((e: { runtime: string }) => e.runtime)).toEqual(['runtimea', 'clia_code', 'clib']);
    for (const entry of limits) {
      expect(entry).toMatchObject({ windows: [], state: 'unknown', reason: expect.any(String) });
    }
    // The setup-token in the env file says how clia signs in; its windows are still unknown.
    expect(limits[1]).toMatchObject({ account: { kind: 'subscription' } });
    expect(limits[1].reason).toMatch(/has not reported a plan window yet/);
  });
});

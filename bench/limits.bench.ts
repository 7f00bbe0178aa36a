/**
 * Plan limits, budgets and the context field over 10,000 sessions (issue 34, docs/limits.md):
 * - GET /api/limits and GET /api/budgets with 50 budgets (scopes all / runtime / agent_id,
 *   periods day / week / month), warm p95, beside GET /api/usage?days=30 in the same run;
 * - GET /api/sessions/{id} (now with `context`) over 300 sessions of the three runtimes, and
 *   the context read alone (SessionContexts.get, in-process on the same index): first read of
 *   a log's tail, and again with the log unchanged (one stat).
 * Goals: limits and budgets < 5 ms p95; the context adds nothing measurable to the session call.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SessionContexts } from '../service/sessions/context.js';
import { startService } from '../test/helpers/service.js';
import { writeCorpus } from './corpus.js';
import { median, percentile, row, timed } from './lib.js';

const ROUNDS = 200;
const figures = (times: number[]) => `${median(times).toFixed(2)} ms median / ${percentile(times, 95).toFixed(2)} ms p95`;
const load = () => `load ${os.loadavg()[0]!.toFixed(1)}`;

const home = await mkdtemp(path.join(os.tmpdir(), 'bench-limits-'));
const corpus = await writeCorpus(home, { sessions: 10_000, now: Date.now() - 60_000, datedFiles: true });
const svc = await startService({ home });
try {
  await svc.service.ctx.sessions.titledList();
  const scopes = ['all', 'clia_code', 'clib', 'runtimea', ...new Set(corpus.map((s) => s.agentId))];
  for (let i = 0; i < 50; i++) {
    const body = { scope: scopes[i % scopes.length], period: (['day', 'week', 'month'] as const)[i % 3], limit_usd: 5 + i, action: i % 5 === 0 ? 'hold_new_turns' : 'notify' };
    const res = await svc.request('PUT', `/api/budgets/b${i}`, { body });
    if (res.status !== 200) throw new Error(`PUT answered ${res.status}: ${res.text}`);
  }
  const rounds = async (target: string): Promise<number[]> => {
    const times: number[] = [];
    for (let i = 0; i < ROUNDS + 10; i++) {
      const [ms, res] = await timed(() => svc.get(target));
      if (res.status !== 200) throw new Error(`${target} answered ${res.status}`);
      if (i >= 10) times.push(ms);
    }
    return times;
  };
  const [coldMs] = await timed(() => svc.get('/api/budgets'));
  row('GET /api/budgets, first (usage store cold)', `${coldMs.toFixed(0)} ms (${load()})`);
  const budgets = (await svc.get('/api/budgets')).json().budgets;
  row('  budgets with spend > 0', `${budgets.filter((b: { spent_usd: number }) => b.spent_usd > 0).length} of ${budgets.length}`);
  row('GET /api/budgets, 50 budgets, 10,000 sessions', `${figures(await rounds('/api/budgets'))} (${load()})`);
  row('GET /api/limits', `${figures(await rounds('/api/limits'))} (${load()})`);
  row('baseline: GET /api/usage?days=30', `${figures(await rounds('/api/usage?days=30'))} (${load()})`);

  const picked = corpus.filter((_, i) => i % 33 === 0).slice(0, 300);
  const sessionTimes: number[] = [];
  for (let r = 0; r < 3; r++) {
    for (const s of picked) {
      const [ms, res] = await timed(() => svc.get(`/api/sessions/${s.id}`));
      if (res.status !== 200) throw new Error(`session answered ${res.status}`);
      if (r > 0) sessionTimes.push(ms);
    }
  }
  const known = (await Promise.all(picked.map(async (s) => (await svc.get(`/api/sessions/${s.id}`)).json().context))).filter(Boolean).length;
  row('GET /api/sessions/{id} with context (warm)', `${figures(sessionTimes)} (${load()}); context known for ${known} of ${picked.length}`);
  const contexts = new SessionContexts();
  const views = await Promise.all(picked.map((s) => svc.service.ctx.sessions.get(s.id)));
  const first: number[] = [];
  const again: number[] = [];
  for (const v of views) first.push((await timed(() => contexts.get(v!)))[0]);
  for (let r = 0; r < 3; r++) for (const v of views) again.push((await timed(() => contexts.get(v!)))[0]);
  row('  the context alone, first read of a log tail', `${figures(first)} (${load()})`);
  row('  the context alone, log unchanged (one stat)', `${figures(again)} (${load()})`);
} finally {
  await svc.close();
  await rm(home, { recursive: true, force: true });
}

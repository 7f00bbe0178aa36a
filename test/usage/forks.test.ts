import { appendFile, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ccusageClaudeDaily, expectSameAsCcusage } from '../helpers/ccusage.js';
import { eventually } from '../helpers/eventually.js';
import { realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';
import { FIXTURES } from '../sessions/fixtures.js';

/**
 * A conversation forked in the terminal (`claude -p --resume <id> --fork-session`): Claude Code
 * 2.1.330 wrote the fork's file (recorded) beginning with a copy of the original's records, the
 * same message and request ids, the same usage. Each model call counts once across the files,
 * in the original, as ccusage counts it; the fork counts its own calls only.
 */
const ccusage = realProgram('ccusage');
const ORIGINAL = 'b3ae9e06-f283-4f86-b666-4daa715badec';
const FORK = '5d736617-604f-4418-8402-c3807f687370';

let home: string;
let svc: TestService;
const projectDir = (): string => path.join(home, '.claude', 'projects', '-home-user-rt-claude-fx-proj');
const fileOf = (id: string): string => path.join(projectDir(), `${id}.jsonl`);
const report = async (): Promise<any> => (await svc.get('/api/usage?days=3650')).json();

/** Each model call of a recorded file (message id and request id) with its largest usage's tokens. */
async function calls(id: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await readFile(path.join(FIXTURES, 'clia-native', `${id}.jsonl`), 'utf8')).split('\n').filter(Boolean)) {
    const r = JSON.parse(line);
    const u = r.type === 'assistant' ? r.message?.usage : undefined;
    if (!u || !r.requestId || r.message.model === '<synthetic>') continue;
    const tokens = u.input_tokens + u.output_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    const key = `${r.message.id}:${r.requestId}`;
    out.set(key, Math.max(out.get(key) ?? 0, tokens));
  }
  return out;
}
const sum = (m: Map<string, number>, only: (key: string) => boolean = () => true): number => [...m].reduce((n, [k, v]) => n + (only(k) ? v : 0), 0);

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'usage-forks-'));
  await mkdir(projectDir(), { recursive: true });
  await copyFile(path.join(FIXTURES, 'clia-native', `${ORIGINAL}.jsonl`), fileOf(ORIGINAL));
  svc = await startService({ home });
});
afterAll(async () => {
  await svc?.close();
  await rm(home, { recursive: true, force: true });
});

describe('a conversation forked in the terminal, in usage', () => {
  it('the recorded fork does copy the original\'s model calls', async () => {
    const [original, fork] = await Promise.all([calls(ORIGINAL), calls(FORK)]);
    const copied = [...fork.keys()].filter((k) => original.has(k));
    expect(copied.length).toBeGreaterThan(1);
    expect(fork.size).toBeGreaterThan(copied.length);
  });

  it('counts each copied call once, in the original; the fork its own calls only, also when its file comes in parts', async () => {
    const [original, fork] = await Promise.all([calls(ORIGINAL), calls(FORK)]);
    const before = await report();
    expect(before.by_session.find((s: any) => s.session_id === ORIGINAL).tokens_total).toBe(sum(original));
    // The fork's file as Claude Code writes it: its first records, then the copy and its turn.
    const lines = (await readFile(path.join(FIXTURES, 'clia-native', `${FORK}.jsonl`), 'utf8')).split('\n').filter(Boolean);
    const firstCall = lines.findIndex((l) => JSON.parse(l).type === 'assistant');
    await writeFile(fileOf(FORK), `${lines.slice(0, firstCall).join('\n')}\n`);
    await eventually(async () => expect((await report()).by_session.some((s: any) => s.session_id === FORK)).toBe(true), 5000);
    await appendFile(fileOf(FORK), `${lines.slice(firstCall).join('\n')}\n`);
    const own = sum(fork, (k) => !original.has(k));
    let after: any;
    await eventually(async () => {
      after = await report();
      expect(after.by_session.find((s: any) => s.session_id === FORK)?.tokens_total).toBe(own);
    }, 5000);
    expect(after.by_session.find((s: any) => s.session_id === ORIGINAL).tokens_total).toBe(sum(original));
    const total = (t: any): number => t.input + t.output + t.cache_read + t.cache_write;
    expect(total(after.total_tokens)).toBe(sum(original) + own);
  });

  it('a restart counts the same', async () => {
    const first = await report();
    await svc.close();
    svc = await startService({ home });
    expect(await report()).toEqual(first);
  });

  it('a fork read whole at a start (a fresh state folder) counts the same', async () => {
    const first = await report();
    await svc.close();
    await rm(path.join(home, '.space-state'), { recursive: true, force: true });
    svc = await startService({ home });
    expect(await report()).toEqual(first);
  });

  it.skipIf(!ccusage)('equals ccusage per day and per model, to the token', async () => {
    expectSameAsCcusage(await report(), ccusageClaudeDaily(ccusage!, home));
  });

  it('the original deleted and not kept (no keeping bound): its copied calls count again, once, in the fork', async () => {
    const [original, fork] = await Promise.all([calls(ORIGINAL), calls(FORK)]);
    const total = (t: any): number => t.input + t.output + t.cache_read + t.cache_write;
    expect(total((await report()).total_tokens)).toBe(sum(original) + sum(fork, (k) => !original.has(k)));
    await svc.close();
    svc = await startService({ home, env: { SPACE_HISTORY_KEEP_MB: '0' } });
    const kept = path.join(home, '.space-state', 'history', 'clia', `${ORIGINAL}.jsonl`);
    await eventually(async () => expect(await readFile(kept).then(() => true, () => false)).toBe(false), 10_000);
    await report();
    await rm(fileOf(ORIGINAL));
    await eventually(async () => {
      const after = await report();
      expect(after.by_session.some((s: any) => s.session_id === ORIGINAL)).toBe(false);
      expect(after.by_session.find((s: any) => s.session_id === FORK).tokens_total).toBe(sum(fork));
      expect(total(after.total_tokens)).toBe(sum(fork));
    }, 5000);
    // ccusage reads the fork alone now, and counts the same.
    if (ccusage) expectSameAsCcusage(await report(), ccusageClaudeDaily(ccusage, home));
  });
});

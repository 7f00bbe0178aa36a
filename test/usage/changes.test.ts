import { appendFile, mkdir, mkdtemp, rename, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../service/log.js';
import type { LogRef } from '../../service/sessions/types.js';
import { PriceFiles } from '../../service/usage/price-file.js';
import { UsageStore } from '../../service/usage/store.js';
import { startService, type TestService } from '../helpers/service.js';
import { runtimeaSessionsDir } from '../sessions/fixtures.js';
import { IDS, writeUsageCorpus } from './corpus.js';
import { at, awayFromMidnight, cliaTurn, DAY, MIDNIGHT_WAIT_MS, runtimeaTranscript, usageOf } from './seed.js';

let svc: TestService;
let home: string;
/** Every read of a log by the usage scan: which log, from which position. */
let reads: Array<{ path: string; from: number }>;

beforeEach(async () => {
  await awayFromMidnight();
  home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-changes-'));
  await writeUsageCorpus(home);
  svc = await startService({ home });
  reads = [];
  const logs = svc.service.ctx.sessions.logs;
  const entries = logs.entries.bind(logs);
  logs.entries = (ref: LogRef, from: number, select) => {
    reads.push({ path: ref.kind === 'sqlite' ? ref.db : ref.path, from });
    return entries(ref, from, select);
  };
}, MIDNIGHT_WAIT_MS + 30_000);

afterEach(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

const usage = (query = ''): Promise<any> => usageOf(svc, query);

/** Polls the report until `ok` holds (the session index learns of changes from its watcher). */
async function until(ok: (body: any) => boolean, query = ''): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const body = await usage(query);
    if (ok(body)) return body;
    if (Date.now() > deadline) throw new Error(`report never changed: ${JSON.stringify(body).slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const cliaLog = (): string => path.join(home, 'clia-space', 'proj', 'sessions', `${IDS.C1}.jsonl`);
const runtimeaLog = (): string => path.join(runtimeaSessionsDir(home), `${IDS.R1}.jsonl`);

describe('per-log aggregates, read incrementally', () => {
  it('an unchanged corpus is not read again', async () => {
    const first = await usage();
    expect(reads.length).toBe(4);
    reads.length = 0;
    expect(await usage()).toEqual(first);
    expect(await usage('?days=7')).toMatchObject({ window_days: 7 });
    expect(reads).toEqual([]);
  });

  it('an appended turn is read from where the last read stopped, and only that log', async () => {
    const before = await usage();
    const size = (await stat(cliaLog())).size;
    reads.length = 0;
    await appendFile(cliaLog(), `${cliaTurn(IDS.C1, 'once more', at(0, '00:40:00.000'), '01-new-text', 1300).join('\n')}\n`);
    const after = await until((b) => b.total_cost_usd !== before.total_cost_usd);
    expect(reads).toEqual([{ path: cliaLog(), from: size }]);
    // 01-new-text: in 4 out 14 cw 12145, $0.061021, 1300 ms.
    expect(after.total_cost_usd).toBeCloseTo(0.312666, 6);
    expect(after.total_tokens).toEqual({ input: 23231 + 4, output: 1362 + 14, cache_read: 71449, cache_write: 17501 + 12145 });
    expect(after.by_session.find((s: any) => s.session_id === IDS.C1)).toMatchObject({ tokens_total: 48930 + 12163, messages: 9 });
  });

  it('a half-written last line counts once it is whole', async () => {
    const before = await usage();
    const lines = cliaTurn(IDS.C1, 'in two writes', at(0, '00:50:00.000'), '01-new-text', 1300);
    const text = `${lines.join('\n')}\n`;
    const cut = text.length - 40;
    await appendFile(cliaLog(), text.slice(0, cut));
    const partial = await until((b) => b.by_session.find((s: any) => s.session_id === IDS.C1).messages === 9);
    expect(partial.total_cost_usd).toBe(before.total_cost_usd);
    await appendFile(cliaLog(), text.slice(cut));
    const whole = await until((b) => b.total_cost_usd !== before.total_cost_usd);
    expect(whole.total_cost_usd).toBeCloseTo(0.312666, 6);
  });

  it('a log replaced by a shorter one is read again from the start', async () => {
    await usage();
    const replacement = `${runtimeaTranscript(IDS.R1, [{ prompt: 'only this', sent: at(0, '01:00:00.000'), calls: [{ at: at(0, '01:00:02.000'), model: 'gpt-6.1-sol', usage: { input: 7, output: 3, cacheRead: 0, cacheWrite: 0 }, cost: 0.5 }] }]).join('\n')}\n`;
    reads.length = 0;
    await writeFile(`${runtimeaLog()}.tmp`, replacement);
    await rename(`${runtimeaLog()}.tmp`, runtimeaLog());
    const after = await until((b) => b.by_session.find((s: any) => s.session_id === IDS.R1)?.cost_usd === 0.5);
    // Read from the start; a later event of the same replacement (seen on a loaded machine) reads
    // on from where that read stopped in the new file, never from the old file's end (4,637 bytes).
    const since = reads.filter((r) => r.path === runtimeaLog());
    expect(since[0]).toEqual({ path: runtimeaLog(), from: 0 });
    for (const r of since.slice(1)) expect(r.from).toBeLessThanOrEqual(Buffer.byteLength(replacement));
    expect(after.by_session.find((s: any) => s.session_id === IDS.R1)).toMatchObject({ tokens_total: 10, messages: 2 });
    expect(after.by_model.map((m: any) => m.model)).not.toContain('claude-fable-5-2');
  });

  it('a deleted log leaves the report; a new one joins it', async () => {
    await usage();
    await unlink(path.join(home, 'clib-space', 'proj', 'sessions', `${IDS.B1}.jsonl`));
    const gone = await until((b) => !b.by_session.some((s: any) => s.session_id === IDS.B1));
    expect(gone.total_cost_usd).toBeCloseTo(0.135802, 6);
    const id = '55555555-5555-4555-8555-555555555555';
    const dir = runtimeaSessionsDir(home, 'other');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, `${id}.jsonl`), `${runtimeaTranscript(id, [{ prompt: 'new one', sent: at(0, '02:00:00.000'), calls: [{ at: at(0, '02:00:01.000'), model: 'gpt-5.5', usage: { input: 1000, output: 0, cacheRead: 0, cacheWrite: 0 } }] }]).join('\n')}\n`);
    // gpt-5.5 from the table: 1000 * 5e-6.
    const joined = await until((b) => b.by_session.some((s: any) => s.session_id === id));
    expect(joined.by_session.find((s: any) => s.session_id === id)).toMatchObject({ cost_usd: 0.005, tokens_total: 1000, agent_name: 'runtimea', title: 'new one' });
  });
});

describe('the store\'s answer on an unchanged index', () => {
  const store = (): UsageStore => {
    const log = createLogger('silent');
    const prices = new PriceFiles(path.join(import.meta.dirname, '..', '..', 'config', 'usage', 'prices.json'), path.join(home, 'none.json'), log);
    const s = new UsageStore(svc.service.ctx.sessions, prices, log);
    s.start();
    return s;
  };

  it('stands while nothing changes and the days asked for were read; a wider window or a change makes a new one', async () => {
    const s = store();
    try {
      // The index lists sessions anew once the first prompts are read (titles): past that,
      // its list stays the same array while nothing changes.
      await svc.service.ctx.sessions.search('');
      const since = Math.floor(Date.now() / DAY) - 29;
      const first = await s.sessions(since);
      // Same days or fewer, nothing changed: the same answer, without a walk over the logs.
      expect(await s.sessions(since)).toBe(first);
      expect(await s.sessions(since + 5)).toBe(first);
      // More days than were read: a new pass (deferred logs may hold them).
      const all = await s.sessions();
      expect(all).not.toBe(first);
      expect(await s.sessions(since)).toBe(all);
      // A change: read, and a new answer with it.
      const before = all.sessions.find((x) => x.sessionId === IDS.C1)!.usage.rows.size;
      await appendFile(cliaLog(), `${cliaTurn(IDS.C1, 'later', at(0, '00:50:00.000'), '01-new-text', 1300).join('\n')}\n`);
      const deadline = Date.now() + 10_000;
      let after = await s.sessions();
      while (after === all && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        after = await s.sessions();
      }
      expect(after).not.toBe(all);
      // Only that log was read, from where it stopped, into the same sessions' usage.
      expect(after.sessions).toBe(all.sessions);
      expect(reads.filter((r) => r.path === cliaLog()).at(-1)!.from).toBeGreaterThan(0);
      expect(after.sessions.find((x) => x.sessionId === IDS.C1)!.usage.rows.size).toBeGreaterThanOrEqual(before);
      // A log replaced by another file: read from the start, and the answer is made anew.
      const mark = reads.length;
      const replacement = `${cliaLog()}.new`;
      await writeFile(replacement, `${cliaTurn(IDS.C1, 'only', at(0, '00:55:00.000'), '01-new-text', 1300).join('\n')}\n`);
      await rename(replacement, cliaLog());
      let replaced = await s.sessions();
      while (replaced.sessions === after.sessions && Date.now() < deadline + 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        replaced = await s.sessions();
      }
      expect(replaced.sessions).not.toBe(after.sessions);
      // Read from the start (the change may be seen twice: at the request, then from the watcher).
      expect(reads.slice(mark).filter((r) => r.path === cliaLog())[0]!.from).toBe(0);
      expect(replaced.sessions.find((x) => x.sessionId === IDS.C1)!.usage.messages.size).toBeGreaterThan(0);
    } finally {
      await s.stop();
    }
  });
});

/** Sets a file's mtime `days` days back. */
const age = (file: string, days: number) => utimes(file, new Date(Date.now() - days * DAY), new Date(Date.now() - days * DAY));
const sessionIds = (body: any): string[] => body.by_session.map((s: any) => s.session_id);

describe('logs that last changed before the window', () => {
  // C1's turns are dated today and yesterday: a file that says it last changed 60 days ago
  // cannot have been written then, which is what shows whether it was read.
  it('are not read for it, and are read once a wider window asks', async () => {
    await age(cliaLog(), 60);
    const recent = await usage('?days=30');
    expect(reads.map((r) => r.path)).not.toContain(cliaLog());
    expect(reads).toHaveLength(3);
    expect(sessionIds(recent)).not.toContain(IDS.C1);
    reads.length = 0;
    const all = await usage('?days=90');
    expect(reads).toEqual([{ path: cliaLog(), from: 0 }]);
    expect(sessionIds(all)).toContain(IDS.C1);
    reads.length = 0;
    await usage('?days=30');
    expect(reads).toEqual([]);
  });

  it('stay unread across requests until they change; a change has them read', async () => {
    await age(cliaLog(), 60);
    await usage('?days=30');
    reads.length = 0;
    expect(sessionIds(await usage('?days=30'))).not.toContain(IDS.C1);
    expect(reads).toEqual([]);
    await appendFile(cliaLog(), `${cliaTurn(IDS.C1, 'once more', at(0, '00:40:00.000'), '01-new-text', 1300).join('\n')}\n`);
    const after = await until((b) => sessionIds(b).includes(IDS.C1), '?days=30');
    expect(after.by_session.find((s: any) => s.session_id === IDS.C1).messages).toBeGreaterThan(0);
    expect(reads.filter((r) => r.path === cliaLog())).toEqual([{ path: cliaLog(), from: 0 }]);
  });

  it('a log changed while a wider window\'s answer stands is read for that window, whatever the request asks', async () => {
    await age(cliaLog(), 120);
    expect(sessionIds(await usage('?days=90'))).not.toContain(IDS.C1);
    expect(sessionIds(await usage('?days=30'))).not.toContain(IDS.C1); // the 90-day answer stands
    // The log now says it last changed 60 days ago (`touch -d`): in the 90 days, not the 30.
    reads.length = 0;
    await age(cliaLog(), 60);
    await until(() => reads.some((r) => r.path === cliaLog() && r.from === 0), '?days=30');
    expect(sessionIds(await usage('?days=90'))).toContain(IDS.C1);
  });

  it('a log changed up to two days before the window is still read (clocks may disagree by that much)', async () => {
    await age(cliaLog(), 31);
    expect(sessionIds(await usage('?days=30'))).toContain(IDS.C1);
    expect(reads.map((r) => r.path)).toContain(cliaLog());
  });
});

describe('the price override file (~/.space-state/prices.json)', () => {
  const override = (): string => path.join(home, '.space-state', 'prices.json');

  it('prices a model the table lacks, replaces a model whole, and is dropped again when removed', async () => {
    const before = await usage();
    expect(before.unpriced_models).toEqual(['claude-fable-5-2']);
    await mkdir(path.dirname(override()), { recursive: true });
    await writeFile(
      override(),
      JSON.stringify({
        models: {
          'claude-fable-5-2': { input_cost_per_token: 1e-5, output_cost_per_token: 5e-5 },
          // gpt-5.5 at 10x: B1's two turns are priced by the table.
          'gpt-5.5': { input_cost_per_token: 5e-5, output_cost_per_token: 3e-4, cache_read_input_token_cost: 5e-6 },
        },
      }),
    );
    const after = await usage();
    expect(after.unpriced_models).toEqual([]);
    // fable: 100 * 1e-5 + 10 * 5e-5 = 0.0015; gpt-5.5: 10 x 0.115843.
    expect(after.by_model.find((m: any) => m.model === 'claude-fable-5-2')).toMatchObject({ cost_usd: 0.0015, priced: true });
    expect(after.by_model.find((m: any) => m.model === 'gpt-5.5').cost_usd).toBe(1.15843);
    // Logged costs still win over any price.
    expect(after.by_model.find((m: any) => m.model === 'gpt-6.1-sol').cost_usd).toBe(0.016);
    await unlink(override());
    expect((await usage()).total_cost_usd).toBe(before.total_cost_usd);
  });

  it('a broken override is reported and ignored', async () => {
    await mkdir(path.dirname(override()), { recursive: true });
    await writeFile(override(), '{"models": {"x": {"input_cost_per_token": "cheap"}}}');
    const body = await usage();
    expect(body.prices_override_error).toMatch(/^models\.x/);
    expect(body.total_cost_usd).toBe(0.251645);
    await writeFile(override(), 'not json');
    expect((await usage()).prices_override_error).toMatch(/^not JSON/);
    expect(svc.logs.join('')).toContain('usage price override ignored');
  });
});

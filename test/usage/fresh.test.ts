import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';
import { runtimeaSessionsDir, writeCliSessions } from '../sessions/fixtures.js';
import { IDS, writeUsageCorpus } from './corpus.js';
import { at, awayFromMidnight, cliaTurn, MIDNIGHT_WAIT_MS, runtimeaTranscript, usageOf } from './seed.js';

/**
 * The report is summed anew on every request (spec): what the request covers is checked
 * against the disk when it is made, so a line appended just before it is in it, whether or
 * not the watcher has told the index yet.
 */
let svc: TestService | undefined;
let home: string;

afterEach(async () => {
  await svc?.close();
  svc = undefined;
  await rm(home, { recursive: true, force: true });
});

describe('GET /api/usage right after a change on disk', () => {
  it('counts a line appended to a runtimea log just before the request', async () => {
    await awayFromMidnight();
    home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-fresh-'));
    await writeUsageCorpus(home);
    svc = await startService({ home });
    const before = await usageOf(svc);
    // One more model call of 11 in, 7 out, written as OpenClaw appends it.
    const line = runtimeaTranscript(IDS.R1, [{ prompt: 'more', sent: at(0, '00:11:00.000'), calls: [{ at: at(0, '00:11:01.000'), model: 'gpt-6.1-sol', usage: { input: 11, output: 7, cacheRead: 0, cacheWrite: 0 }, cost: 0.001 }] }])
      .filter((l) => (JSON.parse(l) as { message?: { role?: string } }).message?.role === 'assistant')
      .join('\n');
    await appendFile(path.join(runtimeaSessionsDir(home), `${IDS.R1}.jsonl`), `${line}\n`);
    const after = await usageOf(svc);
    expect(after.total_tokens.input - before.total_tokens.input).toBe(11);
    expect(after.total_tokens.output - before.total_tokens.output).toBe(7);
    // Again, several times in a row: each request sees its own append.
    for (let i = 0; i < 3; i++) {
      await appendFile(path.join(runtimeaSessionsDir(home), `${IDS.R1}.jsonl`), `${line}\n`);
      const next = await usageOf(svc);
      expect(next.total_tokens.input - before.total_tokens.input).toBe(11 * (i + 2));
    }
  }, MIDNIGHT_WAIT_MS + 30_000);

  it('counts a turn appended to a clia log in a short window just before the request', async () => {
    await awayFromMidnight();
    home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-fresh-'));
    await writeUsageCorpus(home);
    svc = await startService({ home });
    const before = await usageOf(svc, '?days=7');
    const log = path.join(home, 'clia-space', 'proj', 'sessions', `${IDS.C1}.jsonl`);
    await appendFile(log, `${cliaTurn(IDS.C1, 'once more', at(0, '00:40:00.000'), '01-new-text', 1300).join('\n')}\n`);
    const after = await usageOf(svc, '?days=7');
    // 01-new-text: in 4 out 14 cw 12145.
    expect(after.total_tokens.input - before.total_tokens.input).toBe(4);
    expect(after.total_tokens.cache_write - before.total_tokens.cache_write).toBe(12145);
  }, MIDNIGHT_WAIT_MS + 30_000);
});

describe('a session id both runtimes report', () => {
  const ID = '77777777-7777-4777-8777-777777777777';

  it('has the runtimea entry\'s title in by_session, on every start', async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-both-'));
    // runtimea's log (its index has no title: the first prompt is the title) and a clia
    // session of the same id with a title of its own, written first and newer.
    await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
      { agentId: 'proj', sessionId: ID, title: 'the clia title', updatedAt: at(0, '00:30:00.000').getTime(), lines: cliaTurn(ID, 'clia prompt', at(0, '00:20:00.000'), '01-new-text', 1300) },
    ]);
    const { writeRuntimeaStore } = await import('./seed.js');
    writeRuntimeaStore(home, [
      {
        id: ID,
        updatedAt: at(0, '00:10:02.000').getTime(),
        lines: runtimeaTranscript(ID, [{ prompt: 'the runtimea prompt', sent: at(0, '00:10:00.000'), calls: [{ at: at(0, '00:10:01.000'), model: 'gpt-5.5', usage: { input: 1000, output: 0, cacheRead: 0, cacheWrite: 0 } }] }]),
      },
    ]);
    for (let run = 0; run < 4; run++) {
      svc = await startService({ home });
      const sessions = (await usageOf(svc)).by_session.filter((s: any) => s.session_id === ID);
      expect(sessions).toEqual([expect.objectContaining({ title: 'the runtimea prompt', agent_name: 'runtimea', tokens_total: 1000 })]);
      const listed = (await svc.get('/runtimea/usage/sessions')).json().sessions.filter((s: any) => s.session_id === ID);
      expect(listed).toEqual([expect.objectContaining({ title: 'the runtimea prompt' })]);
      await svc.close();
      svc = undefined;
    }
  });

  it('takes the title of the runtimea entry of the project indexes, whichever is read first', async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-both-'));
    const { writeRuntimeaStore } = await import('./seed.js');
    // Neither store titles the session; two projects list it, one as clia's, one as runtimea's.
    writeRuntimeaStore(home, [
      {
        id: ID,
        updatedAt: at(0, '00:10:02.000').getTime(),
        lines: runtimeaTranscript(ID, [{ prompt: 'the runtimea prompt', sent: at(0, '00:10:00.000'), calls: [{ at: at(0, '00:10:01.000'), model: 'gpt-5.5', usage: { input: 1000, output: 0, cacheRead: 0, cacheWrite: 0 } }] }]),
      },
    ]);
    const project = async (pid: string, agent: string, title: string): Promise<void> => {
      const dir = path.join(home, 'space-projects', pid, '.space', 'sessions');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'sessionslist.json'), JSON.stringify([{ sessionId: ID, agent_name: agent, title, updatedAt: at(0, '00:10:02.000').getTime() }]));
    };
    await project('a-clia', 'clia_code', 'listed as clia');
    await project('b-runtimea', 'runtimea', 'listed as runtimea');
    // The same in one index, clia's entry first.
    await writeFile(
      path.join(home, 'space-projects', 'a-clia', '.space', 'sessions', 'sessionslist.json'),
      JSON.stringify([
        { sessionId: ID, agent_name: 'clia_code', title: 'listed as clia', updatedAt: 1 },
        { sessionId: ID, agent_name: 'runtimea', title: 'listed as runtimea', updatedAt: 1 },
      ]),
    );
    for (let run = 0; run < 3; run++) {
      svc = await startService({ home });
      const sessions = (await usageOf(svc)).by_session.filter((s: any) => s.session_id === ID);
      expect(sessions).toEqual([expect.objectContaining({ title: 'listed as runtimea', agent_name: 'runtimea' })]);
      expect((await svc.get(`/api/sessions/${ID}`)).json()).toMatchObject({ title: 'listed as runtimea', agent_name: 'runtimea' });
      await svc.close();
      svc = undefined;
    }
  });
});

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { random, runtimeaLines } from '../../bench/corpus.js';
import { eventually } from '../helpers/eventually.js';
import type { TestService } from '../helpers/service.js';
import { cliaTranscript, clibTranscript, runtimeaSessionsDir, writeCliSessions, writeRuntimeaFileStore, writeRuntimeaSqlite } from '../sessions/fixtures.js';

/**
 * Sessions in every store's real format (the sessions tests' builders and recorded
 * fixtures), plus a few with words chosen for the search tests:
 * - OpenClaw's file store (agent `main`) as captured, and a crafted log `rt-crafted`;
 * - OpenClaw's SQLite store (agent `work`) as captured;
 * - clia (project `alpha`): `clia-tool` (prompt with "zephyrine", then a Bash tool call
 *   `echo hi` from a recorded run), `rank-strong` and `rank-weak` (for ranking);
 * - clib (project `beta`): `clib-shell` (a recorded shell command printing hello-from-tool);
 * - a clia legacy record (agent `old`).
 */
export const day = (d: number): Date => new Date(Date.UTC(2026, 10, d, 12));

export async function seedStores(home: string): Promise<void> {
  await mkdir(path.join(home, 'space-projects', 'alpha'), { recursive: true });
  await mkdir(path.join(home, 'space-projects', 'beta'), { recursive: true });
  await mkdir(path.join(home, 'space-projects', 'empty'), { recursive: true });
  writeRuntimeaFileStore(home, 'main');
  writeRuntimeaSqlite(home, 'work');
  const rand = random(3);
  const crafted = runtimeaLines('rt-crafted', [{ prompt: 'where is the marmalade cache', reply: 'the marmalade cache lives in tmp', tool: { name: 'exec', input: { command: 'ls /var/marmalade' }, output: 'jam.txt toast.txt' } }], day(5).getTime(), rand);
  await writeFile(path.join(runtimeaSessionsDir(home, 'main'), 'rt-crafted.jsonl'), `${crafted.join('\n')}\n`);
  await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
    {
      agentId: 'alpha',
      sessionId: 'clia-tool',
      title: 'Database work',
      updatedAt: day(10).getTime(),
      lines: cliaTranscript('clia-tool', [
        { prompt: 'Please migrate the zephyrine database', run: '01-new-text', at: day(9) },
        { prompt: 'run echo hi', run: '03-resume-tool-bash', at: day(10) },
      ]),
    },
    { agentId: 'alpha', sessionId: 'rank-strong', updatedAt: day(3).getTime(), lines: cliaTranscript('rank-strong', [{ prompt: 'wombat wombat wombat', run: '01-new-text', at: day(3) }]) },
    {
      agentId: 'alpha',
      sessionId: 'rank-weak',
      updatedAt: day(4).getTime(),
      lines: cliaTranscript('rank-weak', [{ prompt: 'a long list of plain filler words in which the animal wombat shows up only once among many other words', run: '01-new-text', at: day(4) }]),
    },
  ]);
  await writeCliSessions(path.join(home, 'clib-space'), 'clib', [
    {
      agentId: 'beta',
      sessionId: 'clib-shell',
      title: 'Shell things',
      updatedAt: day(11).getTime(),
      lines: clibTranscript([
        { prompt: 'check the quokkaflux folder', run: 'shell-gpt-5.5', at: day(11) },
        { prompt: '[[patch]] Create hello.txt', run: 'patch-file-change', at: day(11) },
      ]),
    },
  ]);
  const legacy = path.join(home, 'clia-space', 'old', '.sessions');
  await mkdir(legacy, { recursive: true });
  await writeFile(
    path.join(legacy, 'legacy-plain.json'),
    JSON.stringify({ title: 'plain', messages: [{ role: 'user', content: 'the ancient xylophone recipe', timestamp: '2025-05-01T10:00:00Z' }, { role: 'assistant', text: 'a xylophone is no recipe', timestamp: '2025-05-01T10:00:02Z' }] }),
  );
}

/** Waits until the index is ready and covers every session that has a log. */
export async function indexReady(svc: TestService): Promise<any> {
  let status: any;
  await eventually(async () => {
    const listed = (await svc.get('/api/sessions?limit=1000')).json().sessions.filter((s: any) => s.message_count > 0).length;
    status = (await svc.get('/api/fts/index/all')).json();
    if (status.status !== 'ready' || status.sessions < listed) throw new Error(`not ready: ${JSON.stringify(status)} (${listed} sessions listed)`);
  });
  return status;
}

export async function search(svc: TestService, query: Record<string, string>): Promise<any> {
  const res = await svc.get(`/api/fts/search?${new URLSearchParams(query)}`);
  if (res.status !== 200) throw new Error(`search ${JSON.stringify(query)}: ${res.status} ${res.text}`);
  return res.json();
}

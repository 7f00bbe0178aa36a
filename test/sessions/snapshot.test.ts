import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { diskOperations } from '../../service/sessions/disk.js';
import { startService } from '../helpers/service.js';
import { cliaTranscript, runtimeaSessionsDir, writeCliSessions, writeRuntimeaFileStore } from './fixtures.js';

/**
 * What the session index read is kept in the state folder (session-index.json) and checked
 * against the disk at the next start: a restart reads only what changed, and answers the
 * same as a first start would, whatever the snapshot holds.
 */
let home: string;

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-snapshot-'));
  writeRuntimeaFileStore(home, 'main');
  await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
    { agentId: 'p', sessionId: 'clia-a', title: 'first title', updatedAt: Date.parse('2026-11-23T00:00:00Z'), lines: cliaTranscript('clia-a', [{ prompt: 'Say hello', run: '01-new-text', at: new Date('2026-11-22T00:00:00Z') }]) },
    { agentId: 'p', sessionId: 'clia-b', updatedAt: Date.parse('2026-11-24T00:00:00Z'), lines: cliaTranscript('clia-b', [{ prompt: 'Untitled: named by its first prompt', run: '01-new-text', at: new Date('2026-11-24T00:00:00Z') }]) },
  ]);
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const snapshotFile = (): string => path.join(home, '.space-state', 'session-index.json');

/** The whole listing with titles and counts, as a client sees it. */
async function listing(): Promise<unknown> {
  const svc = await startService({ home });
  try {
    const body = (await svc.get('/api/sessions?limit=1000')).json();
    await svc.get('/api/sessions/search?q=a'); // every title read
    return { ...body, search: (await svc.get('/api/sessions/search?q=untitled')).json() };
  } finally {
    await svc.close();
  }
}

describe('the saved session index', () => {
  it('is written on shutdown (0600), and a restart on an unchanged disk reads no log again', async () => {
    /** Disk operations of a start, its first answers, and everything it does in the background until it is idle. */
    const start = async (): Promise<{ body: unknown; operations: number }> => {
      const before = diskOperations();
      const svc = await startService({ home });
      try {
        const body = (await svc.get('/api/sessions?limit=1000')).json();
        await svc.service.ctx.sessions.search('');
        let seen = diskOperations();
        for (;;) {
          await new Promise((r) => setTimeout(r, 300));
          if (diskOperations() === seen) break;
          seen = diskOperations();
        }
        return { body: { ...body, search: (await svc.get('/api/sessions/search?q=untitled')).json() }, operations: diskOperations() - before };
      } finally {
        await svc.close();
      }
    };
    const first = await start();
    expect((await stat(snapshotFile())).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(snapshotFile(), 'utf8'));
    expect(saved.version).toBe(2);
    // The first prompts read (three OpenClaw logs, and clia-b's, which its index leaves
    // untitled); index files are read again at each start.
    const heads = saved.files.filter(([, known]: [string, { role: string; head?: unknown }]) => known.role === 'log' && known.head).length;
    expect(heads).toBe(4);
    expect(saved.files).toHaveLength(4);

    const again = await start();
    expect(again.body).toEqual(first.body);
    // The first start read the head of each untitled log, and counted each of the 5 logs; the
    // restart stats them and lists their folders, and opens none of them.
    expect(first.operations - again.operations).toBeGreaterThanOrEqual(heads + 5);
  });

  it('what changed while the service was down is read again', async () => {
    await listing();
    const store = new CliSessionStore(path.join(home, 'clia-space'), 'clia_code');
    await store.upsert('p', 'clia-a', { title: 'renamed while down' });
    await appendFile(store.transcriptFile('p', 'clia-b'), `${cliaTranscript('clia-b', [{ prompt: 'more', run: '01-new-text', at: new Date('2026-11-25T00:00:00Z') }]).join('\n')}\n`);
    await rm(path.join(runtimeaSessionsDir(home, 'main'), 'sessions.json'));
    const after = (await listing()) as { sessions: Array<{ session_id: string; title: string; message_count: number }> };
    // The same as a start without any snapshot.
    await rm(snapshotFile());
    await rm(path.join(home, '.space-state', 'session-counts.json'));
    expect(await listing()).toEqual(after);
    expect(after.sessions.find((s) => s.session_id === 'clia-a')!.title).toBe('renamed while down');
    expect(after.sessions.find((s) => s.session_id === 'clia-b')!.message_count).toBe(4);
  });

  it('a damaged, foreign or older snapshot is discarded, and an entry whose key the file no longer has is not believed', async () => {
    const first = await listing();
    for (const damaged of ['{"version":1,"files":[["/x",', 'null', '{"version":0,"files":[]}', '{"version":1,"files":[[5,{}],["a",{"role":"log"}]]}']) {
      await writeFile(snapshotFile(), damaged);
      expect(await listing()).toEqual(first);
    }
    // An entry claiming another first prompt for clia-b's log, read from another file (inode)
    // or from a longer one: not believed. (A log that only grew keeps its first prompt, as
    // while the service runs: logs are appended to, and replaced by a rename.)
    await listing();
    const saved = JSON.parse(await readFile(snapshotFile(), 'utf8'));
    const log = saved.files.find(([p]: [string]) => p.endsWith('clia-b.jsonl'));
    log[1].head.prompt = 'stale';
    for (const [field, by] of [['ino', 1], ['size', 1000]] as const) {
      log[1].key[field] += by;
      log[1].head.key[field] += by;
      await writeFile(snapshotFile(), JSON.stringify(saved));
      expect(await listing()).toEqual(first);
      log[1].key[field] -= by;
      log[1].head.key[field] -= by;
    }
    // The same entry under the file's true key is believed: the check is the key.
    await writeFile(snapshotFile(), JSON.stringify(saved));
    const believed = (await listing()) as { sessions: Array<{ session_id: string; title: string }> };
    expect(believed.sessions.find((x) => x.session_id === 'clia-b')!.title).toBe('stale');
  });
});

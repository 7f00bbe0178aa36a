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
  it('is written on shutdown (0600), and a restart on an unchanged disk reads no log nor index file again', async () => {
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
    expect(saved.version).toBe(1);
    const logs = saved.files.filter(([, known]: [string, { role: string }]) => known.role === 'log').length;
    const indexes = saved.files.filter(([, known]: [string, { role: string }]) => known.role === 'index').length;
    expect(logs).toBe(5);
    expect(indexes).toBe(2);

    const again = await start();
    expect(again.body).toEqual(first.body);
    // The first start read each index file, and each log (its first prompt, then its count);
    // the restart stats them and lists their folders, and reads none of them.
    expect(first.operations - again.operations).toBeGreaterThanOrEqual(indexes + 2 * logs);
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

  it('a damaged, foreign or older snapshot is discarded, and one holding wrong data for a file that changed is not believed', async () => {
    const first = await listing();
    for (const damaged of ['{"version":1,"files":[["/x",', 'null', '{"version":0,"files":[]}', '{"version":1,"files":[[5,{}],["a",{"role":"log"}]]}']) {
      await writeFile(snapshotFile(), damaged);
      expect(await listing()).toEqual(first);
    }
    // An entry claiming another title for clia's index, under a key the file no longer has.
    await listing();
    const saved = JSON.parse(await readFile(snapshotFile(), 'utf8'));
    const index = saved.files.find(([p]: [string]) => p.endsWith(path.join('clia-space', 'p', 'sessions', 'sessions.json')));
    index[1].records = index[1].records.map((r: { title?: string }) => ({ ...r, title: 'stale' }));
    index[1].key.mtimeMs -= 1000;
    await writeFile(snapshotFile(), JSON.stringify(saved));
    expect(await listing()).toEqual(first);
  });
});

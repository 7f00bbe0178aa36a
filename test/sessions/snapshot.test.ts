import { appendFile, copyFile, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
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

// The saved file (service/sessions/snapshot-format.ts) holds its tables as columns.
type Saved = any;
const LOG_ROLE = 1;
const VIEW_FIELDS = ['title', 'updatedAtMs', 'agentId', 'directory', 'logAt', 'sizes'];

/** A saved folder's key, by path. */
function folderRow(saved: Saved, dir: string): { mtimeMs: number; listedAt: number } {
  const i = saved.dirs.path.findIndex((at: number) => saved.paths[at] === dir);
  return { mtimeMs: saved.dirs.mtimeMs[i], listedAt: saved.dirs.listedAt[i] };
}

/** The id of each saved view's owner, in listing order. */
function viewIds(saved: Saved): string[] {
  let at = 0;
  return saved.views.sizes.map((size: number) => saved.records.id[saved.views.records[(at += size) - size]]);
}

/** A saved log's key columns (position `file`) and head row (`log`-th log), by path. */
function savedLog(saved: Saved, suffix: string): { file: number; head: unknown[] } {
  const file = saved.files.path.findIndex((at: number) => saved.paths[at].endsWith(suffix));
  const log = saved.files.role.slice(0, file).filter((role: number) => role === LOG_ROLE).length;
  return { file, head: saved.logs.head[log] };
}

/** Views i and i+1 (of one record each) change places. */
function swapViews(saved: Saved): void {
  const v = saved.views;
  const i = v.sizes.findIndex((size: number, k: number) => size === 1 && v.sizes[k + 1] === 1);
  expect(i).toBeGreaterThanOrEqual(0);
  const at = v.sizes.slice(0, i).reduce((a: number, b: number) => a + b, 0);
  for (const field of VIEW_FIELDS) [v[field][i], v[field][i + 1]] = [v[field][i + 1], v[field][i]];
  [v.records[at], v.records[at + 1]] = [v.records[at + 1], v.records[at]];
}

/** Views 0 and 1 made one view (of two ids). */
function mergeFirstViews(saved: Saved): void {
  const v = saved.views;
  for (const field of VIEW_FIELDS) if (field !== 'sizes') v[field].splice(1, 1);
  v.sizes.splice(0, 2, v.sizes[0] + v.sizes[1]);
}

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
    // Folders quiet for an hour: a restart trusts their mtimes and lists none of them.
    await ageFolders(home);
    const first = await start();
    expect((await stat(snapshotFile())).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(snapshotFile(), 'utf8'));
    expect(saved.version).toBe(5);
    // The first prompts read (three OpenClaw logs, and clia-b's, which its index leaves
    // untitled); index files are read again at each start.
    const heads = saved.logs.head.filter(Boolean).length;
    expect(heads).toBe(4);
    // Every file's state (two indexes, five logs), the folders listed, and the listing itself.
    expect(saved.files.path).toHaveLength(7);
    expect(saved.dirs.path.length).toBeGreaterThanOrEqual(4);
    expect(viewIds(saved)).toEqual((first.body as { sessions: Array<{ session_id: string }> }).sessions.map((x) => x.session_id));

    const again = await start();
    expect(again.body).toEqual(first.body);
    // The first start read the head of each untitled log, and counted each of the 5 logs; the
    // restart stats them and their folders, and lists or opens none of them.
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
    // This version with a wrong entry anywhere, or saved for other roots (another layout): discarded whole.
    await listing();
    const good = JSON.parse(await readFile(snapshotFile(), 'utf8'));
    const wrecks: Array<(doc: any) => void> = [
      (doc) => (doc.roots.clia = '/elsewhere'),
      (doc) => (doc.views.records[0] = doc.records.id.length + 5),
      (doc) => (doc.files.path[0] = doc.paths.length),
      (doc) => (doc.paths[0] = 5),
      (doc) => swapViews(doc), // the listing out of order alone
      (doc) => mergeFirstViews(doc),
      (doc) => doc.logs.id.pop(),
      (doc) => (doc.records.source[0] = 99),
      (doc) => (doc.files.role[0] = 7),
      (doc) => (doc.dirs.ino[0] = null),
      (doc) => delete doc.records,
    ];
    for (const wreck of wrecks) {
      const doc = structuredClone(good);
      // A saved listing is believed as it was saved: these titles would show if it were used.
      doc.views.title = doc.views.title.map(() => 'not believed');
      wreck(doc);
      await writeFile(snapshotFile(), JSON.stringify(doc));
      expect(await listing()).toEqual(first);
    }
    // An entry claiming another first prompt for clia-b's log, read from another file (inode)
    // or from a longer one: not believed. (A log that only grew keeps its first prompt, as
    // while the service runs: logs are appended to, and replaced by a rename.)
    await listing();
    const saved = JSON.parse(await readFile(snapshotFile(), 'utf8'));
    const { file, head } = savedLog(saved, 'clia-b.jsonl') as { file: number; head: [string, number, number, number, number] };
    head[0] = 'stale';
    // The log's key in the files' columns; its head's from position 2 of the head row (ino, size, mtimeMs).
    for (const [field, at, by] of [['ino', 2, 1], ['size', 3, 1000]] as const) {
      saved.files[field][file] += by;
      head[at] += by;
      await writeFile(snapshotFile(), JSON.stringify(saved));
      expect(await listing()).toEqual(first);
      saved.files[field][file] -= by;
      head[at] -= by;
    }
    // The same entry under the file's true key is believed: the check is the key. (Without
    // the saved listing, the listing is merged from the saved files' state.)
    delete saved.views;
    await writeFile(snapshotFile(), JSON.stringify(saved));
    const believed = (await listing()) as { sessions: Array<{ session_id: string; title: string }> };
    expect(believed.sessions.find((x) => x.session_id === 'clia-b')!.title).toBe('stale');
  });

  it('after files and folders were added, removed, grown and replaced while down, lists what a start from nothing lists', async () => {
    const cliaRoot = path.join(home, 'clia-space');
    await writeCliSessions(cliaRoot, 'clia_code', [
      { agentId: 'gone', sessionId: 'clia-gone', title: 'a whole agent removed while down', updatedAt: Date.parse('2026-11-20T00:00:00Z'), lines: cliaTranscript('clia-gone', [{ prompt: 'bye', run: '01-new-text', at: new Date('2026-11-20T00:00:00Z') }]) },
      { agentId: 'p', sessionId: 'clia-c', updatedAt: Date.parse('2026-11-21T00:00:00Z'), lines: cliaTranscript('clia-c', [{ prompt: 'replaced later', run: '01-new-text', at: new Date('2026-11-21T00:00:00Z') }]) },
    ]);
    const orphanDir = path.join(cliaRoot, 'p', 'sessions');
    await writeFile(path.join(orphanDir, 'orphan-old.jsonl'), `${cliaTranscript('orphan-old', [{ prompt: 'an orphan removed while down', run: '01-new-text', at: new Date('2026-11-19T00:00:00Z') }]).join('\n')}\n`);
    // Folders that have been quiet for an hour: their unchanged mtimes are believed (no listing).
    await ageFolders(home);
    await listing();
    await listing(); // a restart on an unchanged disk, saving again
    const saved = JSON.parse(await readFile(snapshotFile(), 'utf8'));
    expect(saved.views.sizes).toHaveLength(8);

    // While down: a folder removed, a folder added, a log added beside others (an orphan) and
    // one removed, a log grown, a log replaced by a rename, an index rewritten.
    await rm(path.join(cliaRoot, 'gone'), { recursive: true });
    await writeCliSessions(cliaRoot, 'clia_code', [
      { agentId: 'new-agent', sessionId: 'clia-new', updatedAt: Date.parse('2026-11-25T00:00:00Z'), lines: cliaTranscript('clia-new', [{ prompt: 'from a folder added while down', run: '01-new-text', at: new Date('2026-11-25T00:00:00Z') }]) },
    ]);
    await writeFile(path.join(orphanDir, 'orphan-new.jsonl'), `${cliaTranscript('orphan-new', [{ prompt: 'an orphan added while down', run: '01-new-text', at: new Date('2026-11-26T00:00:00Z') }]).join('\n')}\n`);
    await rm(path.join(orphanDir, 'orphan-old.jsonl'));
    await appendFile(path.join(orphanDir, 'clia-b.jsonl'), `${cliaTranscript('clia-b', [{ prompt: 'grown', run: '01-new-text', at: new Date('2026-11-25T00:00:00Z') }]).join('\n')}\n`);
    const replaced = path.join(orphanDir, 'clia-c.jsonl');
    await writeFile(`${replaced}.tmp`, `${cliaTranscript('clia-c', [{ prompt: 'the replacement', run: '01-new-text', at: new Date('2026-11-21T00:00:00Z') }]).join('\n')}\n`);
    await rename(`${replaced}.tmp`, replaced);
    const runtimeaLog = path.join(runtimeaSessionsDir(home, 'main'), 'sessions.json');
    await copyFile(runtimeaLog, `${runtimeaLog}.bak`);
    await rm(runtimeaLog);
    const after = (await listing()) as { sessions: Array<{ session_id: string; title: string; message_count: number }> };
    await rm(snapshotFile());
    await rm(path.join(home, '.space-state', 'session-counts.json'));
    expect(await listing()).toEqual(after);
    const ids = after.sessions.map((x) => x.session_id);
    expect(ids).toContain('clia-new');
    expect(ids).toContain('orphan-new');
    expect(ids).not.toContain('clia-gone');
    expect(ids).not.toContain('orphan-old');
    expect(after.sessions.find((x) => x.session_id === 'clia-c')!.title).toBe('the replacement');
    expect(after.sessions.find((x) => x.session_id === 'clia-b')!.message_count).toBe(4);
  });

  it('a folder changed within its listing\'s second is listed again at the next start', async () => {
    // Folders just written: their mtime is too close to their listing to prove the same names.
    await listing();
    const orphanDir = path.join(home, 'clia-space', 'p', 'sessions');
    const saved = JSON.parse(await readFile(snapshotFile(), 'utf8'));
    const dir = folderRow(saved, orphanDir);
    expect(dir.listedAt - dir.mtimeMs).toBeLessThan(2000);
    // A log added, then the folder's mtime put back as it was saved: still found.
    await writeFile(path.join(orphanDir, 'orphan-same-tick.jsonl'), `${cliaTranscript('orphan-same-tick', [{ prompt: 'same tick', run: '01-new-text', at: new Date('2026-11-26T00:00:00Z') }]).join('\n')}\n`);
    await utimes(orphanDir, dir.mtimeMs / 1000, dir.mtimeMs / 1000);
    const after = (await listing()) as { sessions: Array<{ session_id: string }> };
    expect(after.sessions.map((x) => x.session_id)).toContain('orphan-same-tick');
  });

  it('folders listed just after they changed are listed again once quiet, and then saved as proven', async () => {
    const svc = await startService({ home });
    try {
      await svc.get('/api/sessions');
      await new Promise((r) => setTimeout(r, 3500));
    } finally {
      await svc.close();
    }
    const saved = JSON.parse(await readFile(snapshotFile(), 'utf8'));
    const dir = folderRow(saved, path.join(home, 'clia-space', 'p', 'sessions'));
    expect(dir.listedAt - dir.mtimeMs).toBeGreaterThan(2000);
  });
  it('a root that does not exist is not walked at every start, and is read once it exists', async () => {
    // This layout has no clib-space and no space-projects.
    const clib = path.join(home, 'clib-space');
    await expect(stat(clib)).rejects.toThrow();
    await ageFolders(home);
    await listing();
    const changedAtStart = async (): Promise<{ changed: number; ids: string[] }> => {
      const svc = await startService({ home });
      try {
        const ids = (await svc.get('/api/sessions?limit=1000')).json().sessions.map((x: { session_id: string }) => x.session_id);
        const built = svc.logs.join('').split('\n').find((l) => l.includes('"session index built"'))!;
        return { changed: JSON.parse(built).changed, ids };
      } finally {
        await svc.close();
      }
    };
    const unchanged = await changedAtStart();
    expect(unchanged.changed).toBe(0);
    // Made while down: the root appears, and its session with it.
    await writeCliSessions(clib, 'clib', [{ agentId: 'b', sessionId: 'clib-late', title: 'came while down', updatedAt: Date.parse('2026-11-25T00:00:00Z'), lines: [] }]);
    const after = await changedAtStart();
    expect(after.changed).toBeGreaterThan(0);
    expect(after.ids).toContain('clib-late');
    expect(after.ids.filter((id) => id !== 'clib-late')).toEqual(unchanged.ids);
  });
});

describe('a refresh of nested paths', () => {
  it('walks a folder once when the folders below it are handed in too (as when just-written folders are proven)', async () => {
    const svc = await startService({ home });
    try {
      await svc.get('/api/sessions');
      const index = svc.service.ctx.sessions;
      const folders = await allFolders(home);
      const cost = async (paths: string[]): Promise<number> => {
        const before = diskOperations();
        await index.markDirty(paths);
        return diskOperations() - before;
      };
      const rootOnly = await cost([home]);
      expect(rootOnly).toBeGreaterThan(0);
      expect(await cost([home, ...folders])).toBe(rootOnly);
    } finally {
      await svc.close();
    }
  });
});

async function allFolders(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === '.space-state') continue;
    const child = path.join(dir, entry.name);
    out.push(child, ...(await allFolders(child)));
  }
  return out;
}

/** Sets every folder's times an hour back, as for folders untouched since an earlier day. */
async function ageFolders(dir: string): Promise<void> {
  const past = (Date.now() - 3_600_000) / 1000;
  for (const entry of await readdir(dir, { withFileTypes: true })) if (entry.isDirectory() && entry.name !== '.space-state') await ageFolders(path.join(dir, entry.name));
  await utimes(dir, past, past);
}

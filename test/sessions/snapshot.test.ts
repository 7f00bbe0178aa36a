import { appendFile, copyFile, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { diskOperations } from '../../service/sessions/disk.js';
import { startService } from '../helpers/service.js';
import { recordProjectSession } from '../../service/runtimes/project-sessions.js';
import { cliaTranscript, RUNTIMEA_FILE_IDS, runtimeaSessionsDir, writeCliSessions, writeRuntimeaFileStore } from './fixtures.js';

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
  // As the service records the sessions it runs: each also in its project's index (a session
  // with records in two parts of the snapshot), one runtimea session as well.
  const projects = path.join(home, 'space-projects');
  await recordProjectSession(projects, 'p', { sessionId: 'clia-a', agent_name: 'clia_code', title: 'first title', updatedAt: Date.parse('2026-11-23T00:00:00Z'), directory: '/work/p' });
  await recordProjectSession(projects, 'p', { sessionId: 'clia-b', agent_name: 'clia_code', title: '', updatedAt: Date.parse('2026-11-24T00:00:00Z'), directory: '/work/p' });
  await recordProjectSession(projects, 'p', { sessionId: RUNTIMEA_FILE_IDS[0], agent_name: 'runtimea', title: '', updatedAt: Date.parse('2026-11-22T00:00:00Z'), directory: '/work/p' });
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const snapshotFile = (): string => path.join(home, '.space-state', 'session-index.json');

// The saved file (service/sessions/snapshot-format.ts): a header line, one line per part (a
// root of the layout) holding its tables as columns, and the listing's line.
type Saved = { header: any; parts: Record<string, any>; listing?: any };
const LOG_ROLE = 1;
const VIEW_FIELDS = ['title', 'updatedAtMs', 'agentId', 'directory', 'logAt', 'sizes'];

async function readSaved(): Promise<Saved> {
  const [header, ...lines] = (await readFile(snapshotFile(), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  const saved: Saved = { header, parts: {} };
  for (const line of lines) {
    if (line.listing) saved.listing = line;
    else saved.parts[line.part] = line;
  }
  return saved;
}

/** Writes the file back; a part given as a string is written as that raw line. */
async function writeSaved(saved: Saved): Promise<void> {
  const lines = [saved.header, ...Object.values(saved.parts), ...(saved.listing ? [saved.listing] : [])].map((l) => (typeof l === 'string' ? l : JSON.stringify(l)));
  await writeFile(snapshotFile(), `${lines.join('\n')}\n`);
}

/** A saved folder's key, by path. */
function folderRow(saved: Saved, dir: string): { mtimeMs: number; listedAt: number } {
  for (const part of Object.values(saved.parts)) {
    const i = part.dirs.path.findIndex((at: number) => part.paths[at] === dir);
    if (i >= 0) return { mtimeMs: part.dirs.mtimeMs[i], listedAt: part.dirs.listedAt[i] };
  }
  throw new Error(`${dir} not saved`);
}

/** The id of each saved view's owner, in listing order. */
function viewIds(saved: Saved): string[] {
  const l = saved.listing;
  let at = 0;
  return l.sizes.map((size: number) => {
    const k = (at += size) - size;
    return saved.parts[l.parts[l.recordParts[k]]].records.id[l.records[k]];
  });
}

/** A saved log's part, key columns (position `file`) and head row, by path. */
function savedLog(saved: Saved, suffix: string): { part: any; file: number; head: unknown[] } {
  for (const part of Object.values(saved.parts)) {
    const file = part.files.path.findIndex((at: number) => part.paths[at].endsWith(suffix));
    if (file < 0) continue;
    const log = part.files.role.slice(0, file).filter((role: number) => role === LOG_ROLE).length;
    return { part, file, head: part.logs.head[log] };
  }
  throw new Error(`${suffix} not saved`);
}

/** Views i and i+1 (of one record each) change places. */
function swapViews(saved: Saved): void {
  const v = saved.listing;
  const i = v.sizes.findIndex((size: number, k: number) => size === 1 && v.sizes[k + 1] === 1);
  expect(i).toBeGreaterThanOrEqual(0);
  const at = v.sizes.slice(0, i).reduce((a: number, b: number) => a + b, 0);
  for (const field of [...VIEW_FIELDS]) [v[field][i], v[field][i + 1]] = [v[field][i + 1], v[field][i]];
  for (const field of ['records', 'recordParts']) [v[field][at], v[field][at + 1]] = [v[field][at + 1], v[field][at]];
}

/** Views 0 and 1 made one view (of two ids). */
function mergeFirstViews(saved: Saved): void {
  const v = saved.listing;
  for (const field of VIEW_FIELDS) if (field !== 'sizes') v[field].splice(1, 1);
  v.sizes.splice(0, 2, v.sizes[0] + v.sizes[1]);
}

/** The fields of the start's "session index built" line. */
function builtLine(logs: string[]): { changed?: number; discarded?: string[]; restored: number } {
  return JSON.parse(logs.join('').split('\n').find((l) => l.includes('"session index built"'))!);
}

/** The whole listing with titles and counts, as a client sees it, and what the start's index build logged. */
async function listingAndBuild(): Promise<{ body: unknown; built: ReturnType<typeof builtLine> }> {
  const svc = await startService({ home });
  try {
    const body = (await svc.get('/api/sessions?limit=1000')).json();
    await svc.get('/api/sessions/search?q=a'); // every title read
    return { body: { ...body, search: (await svc.get('/api/sessions/search?q=untitled')).json() }, built: builtLine(svc.logs) };
  } finally {
    await svc.close();
  }
}

async function listing(): Promise<unknown> {
  return (await listingAndBuild()).body;
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
    const saved = await readSaved();
    expect(saved.header.version).toBe(7);
    // One part per root of the layout, each with its own tables (the terminal history's too).
    expect(Object.keys(saved.parts).sort()).toEqual(['clia', 'cliaHome', 'cliaKept', 'clib', 'clibArchive', 'clibHome', 'clibKept', 'projects', 'runtimea']);
    const parts = Object.values(saved.parts);
    // The first prompts read (three OpenClaw logs, and clia-b's, which its indexes leave
    // untitled); index files are read again at each start.
    const heads = parts.reduce((n, part) => n + part.logs.head.filter(Boolean).length, 0);
    expect(heads).toBe(4);
    // Every file's state (three indexes, five logs), the folders listed, and the listing itself.
    expect(parts.reduce((n, part) => n + part.files.path.length, 0)).toBe(8);
    expect(parts.reduce((n, part) => n + part.dirs.path.length, 0)).toBeGreaterThanOrEqual(4);
    expect(viewIds(saved)).toEqual((first.body as { sessions: Array<{ session_id: string }> }).sessions.map((x) => x.session_id));
    // Sessions with records in two parts (a store and the project's index) are in the listing.
    expect(saved.listing.sizes.filter((n: number) => n === 2)).toHaveLength(3);

    const again = await start();
    expect(again.body).toEqual(first.body);
    // The first start read the head of each untitled log, and counted each of the 5 logs; the
    // restart stats them and their folders, and lists or opens none of them.
    expect(first.operations - again.operations).toBeGreaterThanOrEqual(heads + 5);
  });

  it('is written in ASCII only, and titles past ASCII come back unchanged from it', async () => {
    const title = 'Café ☕ 日本語 🚀 naïve';
    const store = new CliSessionStore(path.join(home, 'clia-space'), 'clia_code');
    await store.upsert('p', 'clia-a', { title });
    await ageFolders(home);
    const first = await listingAndBuild();
    const bytes = await readFile(snapshotFile());
    expect(bytes.every((b) => b < 0x80)).toBe(true);
    // The escaped title is in the file (JSON's \u escapes), not a replacement character.
    expect(bytes.toString('latin1')).toContain('Caf\\u00e9 \\u2615 \\u65e5');
    const again = await listingAndBuild();
    expect(again.built.restored).toBeGreaterThan(0);
    expect(again.built.discarded).toBeUndefined();
    expect(again.built.changed).toBe(0);
    expect(again.body).toEqual(first.body);
    const sessions = (again.body as { sessions: Array<{ session_id: string; title: string }> }).sessions;
    expect(sessions.find((s) => s.session_id === 'clia-a')!.title).toBe(title);
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

  it('a snapshot of another version is discarded whole; a damaged part costs the reading of that part only', async () => {
    // Folders quiet for an hour: a restart lists none of them unless its part was discarded.
    await ageFolders(home);
    const first = await listing();
    for (const damaged of ['{"version":1,"files":[["/x",', 'null', '{"version":0,"files":[]}', '{"version":4,"roots":{},"paths":[]}']) {
      await writeFile(snapshotFile(), damaged);
      expect(await listing()).toEqual(first);
    }
    await listing();
    const good = await readSaved();
    // Each part on its own: a value of the wrong shape, another root, a line that does not
    // parse. Only that part's root is listed again (changed: 1); the rest is taken back.
    const wrecks: Array<[string, (doc: Saved) => void]> = [
      ['clia', (doc) => (doc.parts.clia.root = '/elsewhere')],
      ['clia', (doc) => (doc.parts.clia.files.path[0] = doc.parts.clia.paths.length)],
      ['clia', (doc) => (doc.parts.clia.paths[0] = 5)],
      ['clia', (doc) => doc.parts.clia.logs.id.pop()],
      ['clia', (doc) => (doc.parts.clia.records.source[0] = 99)],
      ['projects', (doc) => (doc.parts.projects.files.role[0] = 7)],
      ['projects', (doc) => (doc.parts.projects.records.title.length = 1)],
      ['projects', (doc) => (doc.parts.projects = '{"part":"projects","root":')],
      ['runtimea', (doc) => (doc.parts.runtimea.dirs.ino[0] = null)],
      ['runtimea', (doc) => delete doc.parts.runtimea.records],
      ['runtimea', (doc) => delete doc.parts.runtimea],
      // The listing alone: merged again from the parts' state, no file read.
      ['listing', (doc) => (doc.listing.records[0] = 1000)],
      ['listing', (doc) => (doc.listing.recordParts[0] = 9)],
      ['listing', (doc) => doc.listing.recordParts.pop()],
      ['listing', (doc) => swapViews(doc)],
      ['listing', (doc) => mergeFirstViews(doc)],
      ['listing', (doc) => (doc.listing = '{"listing":true,')],
    ];
    for (const [part, wreck] of wrecks) {
      const doc = structuredClone(good);
      // A saved listing is believed as it was saved: these titles would show if it were used.
      doc.listing.title = doc.listing.title.map(() => 'not believed');
      wreck(doc);
      await writeSaved(doc);
      const { body, built } = await listingAndBuild();
      expect(body, part).toEqual(first);
      expect(built.discarded, part).toEqual([part]);
      expect(built.changed, part).toBe(part === 'listing' ? 0 : 1);
    }
    // An undamaged snapshot: nothing discarded, nothing read again.
    await writeSaved(good);
    const { built } = await listingAndBuild();
    expect(built.discarded).toBeUndefined();
    expect(built.changed).toBe(0);
    // An entry claiming another first prompt for clia-b's log, read from another file (inode)
    // or from a longer one: not believed. (A log that only grew keeps its first prompt, as
    // while the service runs: logs are appended to, and replaced by a rename.)
    const saved = await readSaved();
    const { part, file, head } = savedLog(saved, 'clia-b.jsonl') as { part: any; file: number; head: [string, number, number, number, number] };
    head[0] = 'stale';
    // The log's key in the files' columns; its head's from position 2 of the head row (ino, size, mtimeMs).
    for (const [field, at, by] of [['ino', 2, 1], ['size', 3, 1000]] as const) {
      part.files[field][file] += by;
      head[at] += by;
      await writeSaved(saved);
      expect(await listing()).toEqual(first);
      part.files[field][file] -= by;
      head[at] -= by;
    }
    // The same entry under the file's true key is believed: the check is the key. (Without
    // the saved listing, the listing is merged from the saved files' state.)
    delete saved.listing;
    await writeSaved(saved);
    const believed = (await listing()) as { sessions: Array<{ session_id: string; title: string }> };
    expect(believed.sessions.find((x) => x.session_id === 'clia-b')!.title).toBe('stale');
  }, 120_000); // some 25 restarts, each a whole start of the service

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
    const saved = await readSaved();
    expect(saved.listing.sizes).toHaveLength(8);

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
    // A folder just written: its mtime too close to its listing to prove the same names. (Put
    // a minute ahead, as a clock step can, so that a slow start cannot make it look quiet.)
    const orphanDir = path.join(home, 'clia-space', 'p', 'sessions');
    const ahead = (Date.now() + 60_000) / 1000;
    await utimes(orphanDir, ahead, ahead);
    await listing();
    const saved = await readSaved();
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
    const saved = await readSaved();
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

import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { projectSessionsFile, recordProjectSession } from '../../service/runtimes/project-sessions.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'cli-store-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('CLI session store', () => {
  it('creates, merges and finds entries; appends whole lines', async () => {
    const store = new CliSessionStore(root, 'clia_code');
    await store.upsert('proj', 's1', { title: 'first', directory: '/x', nativeSessionId: 'n1' });
    await store.upsert('proj', 's1', { nativeSessionId: 'n2' });
    await store.append('proj', 's1', ['{"a":1}', '{"b":2}']);
    const found = await store.find('s1');
    expect(found?.agentId).toBe('proj');
    expect(found?.entry).toMatchObject({ sessionId: 's1', title: 'first', directory: '/x', nativeSessionId: 'n2' });
    expect(await readFile(store.transcriptFile('proj', 's1'), 'utf8')).toBe('{"a":1}\n{"b":2}\n');
    expect(await store.find('nope')).toBeUndefined();
  });

  it('keeps the array form of an existing index', async () => {
    const store = new CliSessionStore(root, 'clia_code');
    await mkdir(path.dirname(store.indexFile('p')), { recursive: true });
    await writeFile(store.indexFile('p'), JSON.stringify([{ sessionId: 'a', title: 't', updatedAt: 1, directory: '', directoryHistory: [] }]));
    await store.upsert('p', 'b', { title: 'u' });
    const index = JSON.parse(await readFile(store.indexFile('p'), 'utf8'));
    expect(Array.isArray(index)).toBe(true);
    expect(index.map((e: { sessionId: string }) => e.sessionId)).toEqual(['a', 'b']);
  });

  it('refuses path-like ids and leaves a corrupt index untouched', async () => {
    const store = new CliSessionStore(root, 'clia_code');
    expect(() => store.transcriptFile('p', '../evil')).toThrow();
    await expect(store.upsert('..', 's', {})).rejects.toThrow();
    await mkdir(path.dirname(store.indexFile('p')), { recursive: true });
    await writeFile(store.indexFile('p'), '{not json');
    await expect(store.upsert('p', 's', {})).rejects.toThrow(/not valid JSON/);
    expect(await readFile(store.indexFile('p'), 'utf8')).toBe('{not json');
  });

  it('records project sessions, keeping the first title', async () => {
    await recordProjectSession(root, 'proj', { sessionId: 's', agent_name: 'clib', title: 'one', updatedAt: 1, directory: '/d' });
    await recordProjectSession(root, 'proj', { sessionId: 's', agent_name: 'clib', title: 'two', updatedAt: 2, directory: '/d' });
    const index = JSON.parse(await readFile(projectSessionsFile(root, 'proj'), 'utf8'));
    expect(index.s).toEqual({ sessionId: 's', agent_name: 'clib', title: 'one', updatedAt: 2, directory: '/d' });
  });
});

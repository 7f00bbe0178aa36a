import { mkdtemp, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { startService, type TestService } from '../helpers/service.js';
import { cliaTranscript, clibTranscript, runtimeaDb } from '../sessions/fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { day, indexReady, search, seedStores } from './seed.js';

/**
 * Full-text search over seeded stores in every runtime's real format, through HTTP on a
 * real service: what is found, how it is marked and ranked, filters, bad queries, and the
 * index following the disk while the service runs.
 */
let svc: TestService;
let home: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'fts-search-'));
  await seedStores(home);
  svc = await startService({ home });
  await indexReady(svc);
});

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

/** The longest word (letters and digits only) of a text, or undefined. */
function wordOf(text: string): string | undefined {
  return (text.match(/[\p{L}\p{N}]{4,}/gu) ?? []).sort((a, b) => b.length - a.length)[0];
}

function values(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(values);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => (k === 'type' ? [] : values(v)));
  return [];
}

describe('the index', () => {
  it('covers every session with a log, in ~/.space-state/fts, 0600 in a 0700 folder', async () => {
    const status = (await svc.get('/api/fts/index/all')).json();
    const listed = (await svc.get('/api/sessions?limit=1000')).json().sessions.filter((s: any) => s.message_count > 0);
    const messages = listed.reduce((n: number, s: any) => n + s.message_count, 0);
    expect(status).toMatchObject({ status: 'ready', progress: 1, workspace: 'all', sessions: listed.length, messages, pending_sessions: 0 });
    expect(status.documents).toBeGreaterThanOrEqual(messages - 5);
    expect(status.bytes).toBeGreaterThan(1000);
    expect(Date.parse(status.updated_at)).toBeGreaterThan(Date.now() - 600_000);
    const file = path.join(home, '.space-state', 'fts', 'index.sqlite');
    expect(status.index_bytes).toBeGreaterThanOrEqual((await stat(file)).size);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
  });

  it('finds every message of every store by its own words, at the index that opens its page', async () => {
    const sessions = (await svc.get('/api/sessions?limit=1000')).json().sessions.filter((s: any) => s.message_count > 0);
    expect(new Set(sessions.map((s: any) => s.agent_name))).toEqual(new Set(['runtimea', 'clia_code', 'clib']));
    let checked = 0;
    for (const session of sessions) {
      const { messages } = (await svc.get(`/api/messages/${session.session_id}?offset=0&limit=1000`)).json();
      for (const [index, m] of messages.entries()) {
        const parts: Array<[string, string | undefined]> = [
          ['text', m.text.startsWith('[unreadable record') ? undefined : wordOf(m.text)],
          ['tool_call', m.tool_call ? wordOf([m.tool_call.name, ...values(m.tool_call.input)].join(' ')) : undefined],
          ['tool_result', m.tool_result ? wordOf(values(m.tool_result.output).join(' ')) : undefined],
        ];
        for (const [kind, word] of parts) {
          if (!word) continue;
          const { hits } = await search(svc, { q: word, limit: '1000' });
          const hit = hits.find((h: any) => h.session_id === session.session_id && h.message_id === m.id && h.kind === kind);
          expect(hit, `${kind} "${word}" of ${session.session_id} message ${index}`).toMatchObject({ role: m.role, message_index: index, timestamp: m.timestamp, agent_name: session.agent_name, agent_id: session.agent_id, title: session.title });
          // The hit's page: offset = floor(index / limit) * limit.
          const limit = 3;
          const page = (await svc.get(`/api/messages/${session.session_id}?offset=${Math.floor(index / limit) * limit}&limit=${limit}`)).json();
          expect(page.messages[index % limit].id).toBe(m.id);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
  });
});

describe('hits', () => {
  it('words of a user prompt, marked in an escaped snippet, with the session title', async () => {
    const { total, hits } = await search(svc, { q: 'zephyrine' });
    expect(total).toBe(1);
    expect(hits[0]).toMatchObject({ session_id: 'clia-tool', role: 'user', kind: 'text', tool_name: null, agent_name: 'clia_code', agent_id: 'alpha', title: 'Database work', message_index: 0 });
    expect(hits[0].snippet).toBe('Please migrate the <mark>zephyrine</mark> database');
    expect(hits[0].score).toBeGreaterThan(0);
    const escaped = await search(svc, { q: 'hello.txt' });
    expect(escaped.hits.length).toBeGreaterThan(0);
    for (const h of escaped.hits) expect(h.snippet).not.toMatch(/<(?!\/?mark>)/);
  });

  it('words of assistant replies', async () => {
    const { hits } = await search(svc, { q: '"fake Anthropic API"' });
    expect(hits.map((h: any) => h.session_id).sort()).toEqual(['clia-tool', 'rank-strong', 'rank-weak']);
    expect(hits.every((h: any) => h.role === 'assistant' && h.kind === 'text')).toBe(true);
    expect((await search(svc, { q: 'marmalade', agent_name: 'runtimea' })).hits.map((h: any) => [h.role, h.kind])).toEqual(
      expect.arrayContaining([
        ['user', 'text'],
        ['assistant', 'text'],
        ['tool', 'tool_call'],
      ]),
    );
  });

  it('tool call inputs and tool results, marked as such', async () => {
    const clib = (await search(svc, { q: 'hello-from-tool' })).hits.filter((h: any) => h.session_id === 'clib-shell');
    expect(clib.map((h: any) => h.kind).sort()).toEqual(['text', 'tool_call', 'tool_result']);
    expect(clib.find((h: any) => h.kind === 'tool_call')).toMatchObject({ role: 'tool', tool_name: 'command_execution' });
    expect(clib.find((h: any) => h.kind === 'tool_result').snippet).toContain('<mark>hello-from-tool</mark>');

    const bash = (await search(svc, { q: '"echo hi"', ws: 'alpha' })).hits.map((h: any) => [h.session_id, h.role, h.kind, h.tool_name]);
    expect(bash.sort()).toEqual([
      ['clia-tool', 'tool', 'tool_call', 'Bash'],
      ['clia-tool', 'user', 'text', null],
    ]);
    expect((await search(svc, { q: 'toast.txt' })).hits).toEqual([expect.objectContaining({ session_id: 'rt-crafted', kind: 'tool_result', tool_name: 'exec' })]);
    // OpenClaw's SQLite store: the `ls` tool's listing
    expect((await search(svc, { q: 'IDENTITY.md' })).hits).toContainEqual(expect.objectContaining({ kind: 'tool_result', tool_name: 'ls', agent_name: 'runtimea', agent_id: 'work' }));
    // the clia legacy record
    expect((await search(svc, { q: 'xylophone' })).hits.map((h: any) => [h.session_id, h.role])).toEqual(expect.arrayContaining([['legacy-plain', 'user'], ['legacy-plain', 'assistant']]));
  });

  it('phrases keep order and adjacency; prefixes match word starts only', async () => {
    expect((await search(svc, { q: '"migrate the zephyrine"' })).total).toBe(1);
    expect((await search(svc, { q: '"zephyrine migrate"' })).total).toBe(0);
    expect((await search(svc, { q: 'zephyrine migrate' })).total).toBe(1);
    expect((await search(svc, { q: 'zephyr' })).total).toBe(0);
    expect((await search(svc, { q: 'zephyr*' })).hits[0].session_id).toBe('clia-tool');
    expect((await search(svc, { q: 'ZEPHY*' })).total).toBe(1);
    expect((await search(svc, { q: 'ephyr*' })).total).toBe(0);
    expect((await search(svc, { q: '"migrate the zeph*"' })).total).toBe(1);
    expect((await search(svc, { q: '"migrate zeph*"' })).total).toBe(0);
  });

  it('OR, exclusions and punctuation', async () => {
    expect((await search(svc, { q: 'zephyrine OR quokkaflux' })).hits.map((h: any) => h.session_id).sort()).toEqual(['clia-tool', 'clib-shell']);
    expect((await search(svc, { q: 'wombat -once' })).hits.map((h: any) => h.session_id)).toEqual(['rank-strong']);
    expect((await search(svc, { q: 'wombat NOT once' })).hits.map((h: any) => h.session_id)).toEqual(['rank-strong']);
    // FTS5 syntax typed by a user is plain text: no column filter, no NEAR, no anchor
    for (const q of ['^zephyrine', '(zephyrine)', 'zephyrine AND', '+zephyrine']) {
      expect((await search(svc, { q })).hits.map((h: any) => h.session_id), q).toEqual(['clia-tool']);
    }
    // `body:zephyrine` is the two-word phrase "body zephyrine", as `user_id` is "user id"
    expect((await search(svc, { q: 'body:zephyrine' })).total).toBe(0);
    expect((await search(svc, { q: 'the:zephyrine' })).hits.map((h: any) => h.session_id)).toEqual(['clia-tool']);
    expect((await search(svc, { q: 'scope:a636c6962' })).total).toBe(0);
  });

  it('ranks a message where the word is dense above one where it is diluted', async () => {
    const { hits } = await search(svc, { q: 'wombat' });
    expect(hits.map((h: any) => h.session_id)).toEqual(['rank-strong', 'rank-weak']);
    expect(hits[0].score).toBeGreaterThan(hits[1].score);
    const both = await search(svc, { q: 'wombat OR zephyrine' });
    const scores = both.hits.map((h: any) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('pages with limit and offset', async () => {
    const all = await search(svc, { q: 'hello', limit: '100' });
    expect(all.total).toBeGreaterThan(4);
    const page = await search(svc, { q: 'hello', limit: '2', offset: '2' });
    expect(page).toMatchObject({ total: all.total, capped: false, offset: 2 });
    expect(page.hits.map((h: any) => [h.session_id, h.message_id, h.kind])).toEqual(all.hits.slice(2, 4).map((h: any) => [h.session_id, h.message_id, h.kind]));
    expect((await search(svc, { q: 'hello', offset: String(all.total) })).hits).toEqual([]);
  });
});

describe('filters and workspaces', () => {
  it('ws (a project under the projects root) and agent_name narrow the hits', async () => {
    const everywhere = await search(svc, { q: 'hello', limit: '1000' });
    const alpha = await search(svc, { q: 'hello', limit: '1000', ws: 'alpha' });
    expect(alpha.total).toBeGreaterThan(0);
    expect(alpha.total).toBeLessThan(everywhere.total);
    expect(alpha.hits.every((h: any) => h.agent_id === 'alpha')).toBe(true);
    const clib = await search(svc, { q: 'hello', limit: '1000', agent_name: 'clib' });
    expect(clib.hits.length).toBeGreaterThan(0);
    expect(clib.hits.every((h: any) => h.agent_name === 'clib')).toBe(true);
    expect((await search(svc, { q: 'hello', ws: 'alpha', agent_name: 'clib' })).total).toBe(0);
    expect((await search(svc, { q: 'hello', ws: 'all' })).total).toBe(everywhere.total);
  });

  it('GET /api/fts/index/{ws}: per project, per agent id, and all', async () => {
    const alpha = (await svc.get('/api/fts/index/alpha')).json();
    expect(alpha).toMatchObject({ status: 'ready', progress: 1, workspace: 'alpha', sessions: 3 });
    // An agent id that is no project folder (the runtimea agent `main`) has its own figures too.
    expect((await svc.get('/api/fts/index/main')).json()).toMatchObject({ status: 'ready', progress: 1, workspace: 'main' });
    expect((await svc.get('/api/fts/index/main')).json().sessions).toBeGreaterThan(0);
    expect((await svc.get('/api/fts/search?q=hello&ws=nope')).status).toBe(404);
  });

  it('GET /api/fts/index/{ws} with nothing indexed: the stub shape, idle and 0, for every ws', async () => {
    const keys = Object.keys((await svc.get('/api/fts/index/alpha')).json()).sort();
    for (const [ws, echoed] of [['empty', 'empty'], ['nope', 'nope'], ['not-a-project-yet', 'not-a-project-yet'], ['%2e%2e', '..'], ['a%2Fb', 'a/b'], ['%C3%A9t%C3%A9', 'été']]) {
      const res = await svc.get(`/api/fts/index/${ws}`);
      expect(res.status, ws).toBe(200);
      const body = res.json();
      expect(body, ws).toEqual({ status: 'idle', progress: 0, workspace: echoed, sessions: 0, documents: 0, messages: 0, bytes: 0, pending_sessions: 0, updated_at: null, index_bytes: expect.any(Number) });
      expect(Object.keys(body).sort()).toEqual(keys);
    }
  });
});

describe('bad queries are 400 with a detail, never 500', () => {
  it.each([
    ['"zephyrine', /unbalanced quote/],
    ['say "hi', /unbalanced quote/],
    ['', /no words to search for/],
    ['   ', /no words to search for/],
    ['*** ---', /no words to search for/],
    ['-zephyrine', /not only words to leave out/],
    ['NOT zephyrine', /not only words to leave out/],
    ['z*', /prefix needs at least 2/],
    ['x'.repeat(1001), /too long/],
  ])('q=%j', async (q, detail) => {
    const res = await svc.get(`/api/fts/search?${new URLSearchParams({ q })}`);
    expect(res.status).toBe(400);
    expect(res.json().detail).toMatch(detail);
  });

  it('missing or repeated parameters, bad limit, offset and agent_name', async () => {
    for (const [target, detail] of [
      ['/api/fts/search', 'q is required'],
      ['/api/fts/search?q=a&q=b', 'q must be a single string'],
      ['/api/fts/search?q=hello&limit=-1', 'limit must be an integer from 0 to 1000'],
      ['/api/fts/search?q=hello&offset=x', 'offset must be an integer of 0 or more'],
      ['/api/fts/search?q=hello&agent_name=gpt', 'agent_name must be one of runtimea, clia_code, clib'],
      ['/api/fts/search?q=hello&ws=a&ws=b', 'ws must be a single string'],
    ]) {
      const res = await svc.get(target!);
      expect(res.status, target).toBe(400);
      expect(res.json().detail).toBe(detail);
    }
  });

  it('odd input searches as text', async () => {
    for (const q of ['"', '""', '" "', 'OR', 'AND OR NOT', '-', 'a"b"c', '"a" OR', 'NEAR("x" "y", 2)', '{body}:x', 'x:', '+', '\u0000', 'é*', '"\u{1F600}"', "'; DROP TABLE docs; --"]) {
      const res = await svc.get(`/api/fts/search?${new URLSearchParams({ q })}`);
      expect([200, 400], `${JSON.stringify(q)}: ${res.text}`).toContain(res.status);
      if (res.status === 400) expect(typeof res.json().detail).toBe('string');
    }
    expect((await search(svc, { q: 'zephyrine' })).total).toBe(1);
  });
});

describe('the index follows the disk', () => {
  it('a message appended to a running session is searchable within 2 s', async () => {
    const store = new CliSessionStore(path.join(home, 'clia-space'), 'clia_code');
    const identity = (h: any) => [h.session_id, h.message_id, h.message_index, h.kind];
    const before = (await search(svc, { q: 'zephyrine' })).hits.map(identity);
    const count = (await svc.get('/api/sessions/clia-tool')).json().message_count;
    const appended = Date.now();
    await store.append('alpha', 'clia-tool', cliaTranscript('clia-tool', [{ prompt: 'now the ocelotworks table', run: '01-new-text', at: new Date() }]));
    await eventually(async () => expect((await search(svc, { q: 'ocelotworks' })).total).toBe(1), 2000);
    expect(Date.now() - appended).toBeLessThan(2000);
    const hit = (await search(svc, { q: 'ocelotworks' })).hits[0];
    // The new prompt follows every message the session had.
    expect(hit).toMatchObject({ session_id: 'clia-tool', role: 'user', message_index: count });
    expect((await svc.get(`/api/messages/clia-tool?offset=${count}&limit=1`)).json().messages[0].id).toBe(hit.message_id);
    // What was indexed before is not indexed twice.
    expect((await search(svc, { q: 'zephyrine' })).hits.map(identity)).toEqual(before);
  });

  it('a row added to the OpenClaw SQLite store is searchable within 2 s', async () => {
    const db = new Database(runtimeaDb(home, 'work'));
    try {
      const id = '55b6bb4e-8046-409c-bb8b-656b02f75cff';
      const now = Date.now();
      const event = JSON.stringify({ type: 'message', id: 'sql-fts-1', parentId: null, timestamp: new Date(now).toISOString(), message: { role: 'user', content: 'where did the narwhalbyte go' } });
      db.prepare('INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)').run(id, 500, event, now);
      db.prepare('UPDATE session_windows SET updated_at = ? WHERE session_id = ?').run(now, id);
      await eventually(async () => expect((await search(svc, { q: 'narwhalbyte' })).hits).toEqual([expect.objectContaining({ session_id: id, message_id: 'sql-fts-1', agent_id: 'work' })]), 2000);
    } finally {
      db.close();
    }
  });

  it('a new session is found, and a deleted one disappears', async () => {
    await new CliSessionStore(path.join(home, 'clib-space'), 'clib').append(
      'beta',
      'clib-new',
      clibTranscript([{ prompt: 'a brand new capybarasync question', run: 'new-text', at: day(20) }]),
    );
    await eventually(async () => expect((await search(svc, { q: 'capybarasync' })).hits).toEqual([expect.objectContaining({ session_id: 'clib-new', agent_name: 'clib', agent_id: 'beta' })]));
    const before = (await svc.get('/api/fts/index/beta')).json();
    await unlink(path.join(home, 'clib-space', 'beta', 'sessions', 'clib-new.jsonl'));
    await eventually(async () => expect((await search(svc, { q: 'capybarasync' })).total).toBe(0));
    await eventually(async () => expect((await svc.get('/api/fts/index/beta')).json()).toMatchObject({ status: 'ready', sessions: before.sessions - 1 }));
    expect((await search(svc, { q: 'quokkaflux' })).total).toBe(1);
  });

  it('a rewritten log is indexed afresh', async () => {
    const file = path.join(home, 'clia-space', 'alpha', 'sessions', 'rank-weak.jsonl');
    await writeFile(`${file}.tmp`, `${cliaTranscript('rank-weak', [{ prompt: 'rewritten about the pangolinforge', run: '01-new-text', at: day(4) }]).join('\n')}\n`);
    await rename(`${file}.tmp`, file);
    await eventually(async () => expect((await search(svc, { q: 'pangolinforge' })).hits).toEqual([expect.objectContaining({ session_id: 'rank-weak', message_index: 0 })]));
    expect((await search(svc, { q: 'wombat' })).hits.map((h: any) => h.session_id)).toEqual(['rank-strong']);
  });
});

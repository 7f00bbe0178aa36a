import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.js';
import { startChildService, type ChildService } from '../helpers/child-service.js';
import { openSse } from '../helpers/sse.js';
import { descendants, snapshot, tempFiles } from './harness.js';
import { HOSTILE_CLAUDE } from './hostile-runtime.js';

/**
 * kill -9 in the middle of bursts of writes to every store, then a restart on the same HOME
 * (#48-#50 and the fault list): every store file parses and is one whole version,
 * every write the service acknowledged before the kill is there, no temp file is left once
 * the restarted service has swept, no program of the killed service lives on, and the
 * restarted service answers from the same data. Rounds: ADV_KILL_ROUNDS (default 3).
 */
const ROUNDS = Number(process.env.ADV_KILL_ROUNDS ?? 3);
const VERSIONS = ['A'.repeat(200_000), 'B'.repeat(300_000), `C${'c'.repeat(100_000)}`];

const API_KEY = 'crash-test-bearer';
let home: string;
let log: string;
let upstream: FakeUpstream;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'space-crash-'));
  log = path.join(home, 'hostile-claude.log');
  upstream = await startFakeUpstream();
  upstream.acceptApiKey(API_KEY, 'crash-user');
});
afterAll(async () => {
  await upstream.close();
  await rm(home, { recursive: true, force: true });
});

function start(): Promise<ChildService> {
  // An upstream and a bearer, so the usage sync sends its first report and writes its watermark at start.
  return startChildService({ home, env: { SPACE_CLIA_BIN: HOSTILE_CLAUDE, FAKE_CLAUDE_LOG: log, SPACE_CHAT_MAX_TURNS: '64', SPACE_UPSTREAM_URL: upstream.url, SPACE_API_KEY: API_KEY } });
}

/** What the service said it stored before the kill. */
interface Acknowledged {
  agents: Set<string>;
  onboarded: boolean;
  sessions: Set<string>;
}

/** Keeps every store busy until `stop` resolves; collects what was acknowledged. */
async function burst(svc: ChildService, round: number, stop: Promise<void>, acked: Acknowledged): Promise<number> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  let requests = 0;
  const loop = async (task: (i: number) => Promise<void>): Promise<void> => {
    for (let i = 0; !stopped; i++) {
      requests++;
      await task(i).catch(() => undefined); // the kill cuts requests short: that is the point
    }
  };
  const save = path.join(home, 'notes', 'saved.txt');
  await Promise.all([
    ...[0, 1, 2].map((w) =>
      loop(async (i) => {
        const id = `r${round}-w${w}-${i}`;
        const res = await svc.post('/api/agents', { id, name: `Agent ${id}`, blob: randomBytes(2048).toString('hex') });
        if (res.status === 200) acked.agents.add(id);
      }),
    ),
    loop(async (i) => {
      await svc.request('PATCH', `/api/agents/r${round}-w0-${Math.max(0, i - 1)}`, { body: { patched: i } });
    }),
    loop(async (i) => {
      await svc.post(`/api/config/providers/p${i % 7}/key`, { key: `key-${round}-${i}-${randomBytes(8).toString('hex')}` });
    }),
    loop(async (i) => {
      await svc.post('/api/channels/add', { channel: ['telegram', 'discord', 'slack'][i % 3], token: `tok-${round}-${i}` });
    }),
    loop(async (i) => {
      await svc.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'PUT_KEY', value: `v${i}` }, { key: `PROVA_API_KEY`, value: `put-${i}` }] } });
    }),
    loop(async () => {
      const res = await svc.post('/api/onboarding/complete', {});
      if (res.status === 200) acked.onboarded = true;
    }),
    loop(async (i) => {
      await svc.post(`/api/connectors/${i % 2 ? 'agenthost' : 'deployhost'}/token`, { token: `connector-${round}-${i}` });
    }),
    loop(async (i) => {
      const ids = [...acked.sessions];
      if (ids.length === 0) return void (await new Promise((r) => setTimeout(r, 50)));
      await svc.request('PATCH', `/api/sessions/${ids[i % ids.length]}`, { body: { directory: path.join(home, 'space-projects', 'crashproj', `dir${i}`) } });
    }),
    loop(async (i) => {
      await svc.post('/api/files/save', { path: save, content: VERSIONS[i % VERSIONS.length] });
    }),
    ...[0, 1].map(() =>
      loop(async () => {
        const res = await svc.post('/api/chat/prompt', { text: 'slow 3', agent_name: 'clia_code', agent_id: 'crashproj' });
        if (res.status !== 200) return;
        const sse = await openSse(svc.port, `/api/chat/stream/${res.json().stream_id}`);
        await sse.waitFor((e) => e.event === 'session-created');
        acked.sessions.add(res.json().session_id);
        await sse.ended;
      }),
    ),
    // One turn that never ends: the killed service must not leave its program running.
    (async () => {
      const res = await svc.post('/api/chat/prompt', { text: 'stubborn hang', agent_name: 'clia_code', agent_id: 'crashproj' });
      if (res.status === 200) await openSse(svc.port, `/api/chat/stream/${res.json().stream_id}`).catch(() => undefined);
    })(),
  ]);
  return requests;
}

function runsOf(): Array<{ pid: number }> {
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
}

/** Every JSON store under HOME parses; returns how many were checked. */
async function expectStoresParse(): Promise<number> {
  const files = [
    path.join(home, '.runtimea', 'runtimea.json'),
    path.join(home, '.space-state', 'state.json'),
    path.join(home, 'clia-space', 'crashproj', 'sessions', 'sessions.json'),
    path.join(home, 'space-projects', 'crashproj', '.space', 'sessions', 'sessionslist.json'),
    path.join(home, '.space-state', 'connectors.json'),
    path.join(home, '.space-state', 'usage-sync.json'),
    path.join(home, '.space-state', 'children.json'),
  ];
  let checked = 0;
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = await readFile(file, 'utf8');
    expect(() => JSON.parse(text), file).not.toThrow();
    checked++;
  }
  return checked;
}

/** The env file is lines of KEY=value, comments or blanks, every value one that was sent. */
async function expectEnvWhole(): Promise<void> {
  const file = path.join(home, '.runtimea', '.env');
  if (!existsSync(file)) return;
  const text = await readFile(file, 'utf8');
  expect(text === '' || text.endsWith('\n'), 'env file ends with a newline').toBe(true);
  for (const line of text.split('\n').filter(Boolean)) {
    expect(line, 'env line').toMatch(/^(#.*|[A-Za-z_][A-Za-z0-9_]*=(key-\d+-\d+-[0-9a-f]{16}|tok-\d+-\d+|v\d+|put-\d+))$/);
  }
}

const figures = { rounds: 0, requests: 0, storesChecked: 0, acknowledgedAgents: 0, orphansReaped: 0 };

describe('kill -9 during bursts of writes to every store, then a restart', () => {
  it(`#48 #50 survives ${ROUNDS} kills with every file whole and nothing acknowledged lost`, async () => {
    const acked: Acknowledged = { agents: new Set(), onboarded: false, sessions: new Set() };
    for (let round = 0; round < ROUNDS; round++) {
      const svc = await start();
      let kill!: () => void;
      const killed = new Promise<void>((resolve) => (kill = resolve));
      const runsBefore = runsOf().length;
      // Without a watermark each start reports again, so the kill can land on that write too.
      await rm(path.join(home, '.space-state', 'usage-sync.json'), { force: true });
      const ackedBefore = acked.agents.size;
      const work = burst(svc, round, killed, acked);
      await new Promise((r) => setTimeout(r, 800 + Math.random() * 700));
      // Mid-burst, once the round has had some writes acknowledged (a loaded machine answered
      // only a few in the first 1.5 s, and the run proved less than it claims).
      await expect.poll(() => acked.agents.size - ackedBefore, { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(4);
      process.kill(svc.pid, 'SIGKILL');
      await svc.exited;
      kill();
      figures.requests += await work;
      // The killed service's programs outlived it (their groups are their own): the restart must end them.
      const orphaned = runsOf()
        .slice(runsBefore)
        .filter((r) => livePidsInGroup(r.pid).length > 0);

      const again = await start();
      try {
        for (const run of orphaned) await expect.poll(() => livePidsInGroup(run.pid), { timeout: 10_000 }).toEqual([]);
        figures.orphansReaped += orphaned.length;
        figures.storesChecked += await expectStoresParse();
        await expectEnvWhole();
        const saved = path.join(home, 'notes', 'saved.txt');
        if (existsSync(saved)) expect(VERSIONS).toContain(await readFile(saved, 'utf8'));
        // Acknowledged writes are all there, read back through the restarted service.
        const agents = new Set(((await again.request('GET', '/api/agents')).json().agents as Array<{ id: string }>).map((a) => a.id));
        for (const id of acked.agents) expect(agents.has(id), `agent ${id}`).toBe(true);
        if (acked.onboarded) expect((await again.request('GET', '/api/onboarding')).json().onboarding_completed).toBe(true);
        for (const id of acked.sessions) {
          const res = await again.request('GET', `/api/messages/${id}`);
          if (res.status !== 200) {
            const dir = path.join(home, 'clia-space', 'crashproj', 'sessions');
            console.log('MISSING', id, res.text, existsSync(path.join(dir, `${id}.jsonl`)) ? readFileSync(path.join(dir, `${id}.jsonl`), 'utf8').slice(0, 300) : 'no transcript', readFileSync(path.join(dir, 'sessions.json'), 'utf8').includes(id));
          }
          expect(res.status, `session ${id}`).toBe(200);
        }
        expect((await again.request('GET', '/api/secrets/env')).status).toBe(200);
        expect((await again.request('GET', '/api/sessions')).status).toBe(200);
        // The full-text index (SQLite, written while the turns ran) opens and answers.
        expect((await again.request('GET', '/api/fts/search?q=light')).status).toBe(200);
        expect((await again.request('GET', '/api/usage')).status).toBe(200);
        // The restart swept what the kill left half-written in the service's own folders. (A save
        // into a user's folder can leave its hidden temp file there: documented, never the target.)
        expect(tempFiles(await snapshot(home)).filter((p) => !p.startsWith('notes/'))).toEqual([]);
      } finally {
        await again.stop();
      }
      figures.rounds++;
    }
    figures.acknowledgedAgents = acked.agents.size;
    expect(acked.agents.size).toBeGreaterThan(10);
    expect(descendants()).toEqual([]);
    console.log(`kill -9 figures: ${JSON.stringify(figures)}`);
  }, 60_000 + ROUNDS * 30_000);

  it('a save cut by the kill left at most its own hidden temp file beside the target', async () => {
    const names = await readdir(path.join(home, 'notes'));
    expect(names).toContain('saved.txt');
    for (const name of names.filter((n) => n !== 'saved.txt')) expect(name).toMatch(/^\.saved\.txt\.[0-9a-f]{12}\.tmp$/);
  });
});

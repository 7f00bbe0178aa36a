import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAUDE_DOUBLE, startChat, type ChatService } from '../helpers/chat.js';
import { startChildService, type ChildService } from '../helpers/child-service.js';
import { openSse } from '../helpers/sse.js';
import { completedTurn } from './turns.js';

/**
 * Where checkpoints are off, and a kill -9 in the middle of one (the CLI double: the turns
 * themselves do not matter here, only the directory around them). A turn never fails because
 * of its checkpoints: its entry says why there are none.
 */
let chat: ChatService | undefined;
let child: ChildService | undefined;
const temps: string[] = [];
afterEach(async () => {
  await chat?.close();
  await child?.stop();
  chat = undefined;
  child = undefined;
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('checkpoints that are off', () => {
  it('git missing: the turn runs, its entry says checkpoints are off and why', async () => {
    chat = await startChat({ SPACE_GIT_BIN: '/nonexistent/git' });
    const { sessionId, sse } = await chat.turn({ agent_name: 'clia_code', agent_id: 'nogit', text: 'hello' });
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    const entry = await completedTurn(chat.get, sessionId!);
    expect(entry).toMatchObject({ kind: 'turn', revertible: false, checkpoint: { state: 'off', note: expect.stringContaining('git (/nonexistent/git) was not found') } });
    expect((await chat.get(`/api/sessions/${sessionId}/turns/${entry.turn_id}/diff`)).json()).toEqual({ turn_id: entry.turn_id, files: [] });
    const refused = await chat.post(`/api/sessions/${sessionId}/turns/${entry.turn_id}/revert`, {});
    expect(refused.status).toBe(409);
  });

  it('a turn whose directory is the home folder itself is not checkpointed, and its entry says so', async () => {
    // startChat's HOME is a temp folder: the projects root is its parent, the project the HOME folder.
    chat = await startChat({ SPACE_PROJECTS_ROOT: os.tmpdir() });
    const { sessionId } = await chat.turn({ agent_name: 'clia_code', agent_id: path.basename(chat.home), text: 'hello' });
    const entry = await completedTurn(chat.get, sessionId!);
    expect(entry.checkpoint).toEqual({ state: 'off', note: expect.stringContaining('the home folder itself') });
    expect(readdirSync(path.join(chat.home, '.space-state', 'checkpoints')).includes('stores')).toBe(false);
  });
});

describe('pruning', () => {
  it('over the disk bound the oldest session loses its checkpoints; the newest keeps them, its diff and revert work', async () => {
    chat = await startChat({ SPACE_CHECKPOINT_MAX_BYTES: '1', SPACE_CHAT_HEARTBEAT_CLI_MS: '300' });
    const turnWithFile = async (agentId: string, file: string) => {
      const project = path.join(chat!.home, 'space-projects', agentId);
      await mkdir(project, { recursive: true });
      const res = await chat!.prompt({ agent_name: 'clia_code', agent_id: agentId, text: 'slow hello' });
      const sse = await chat!.stream(res.json().stream_id);
      await sse.waitFor((e) => e.event === 'text-delta', 30_000);
      await writeFile(path.join(project, file), `${file}\n`);
      await sse.ended;
      return { sessionId: res.json().session_id as string, entry: await completedTurn(chat!.get, res.json().session_id), project };
    };
    const old = await turnWithFile('older', 'old.txt');
    expect(old.entry.revertible).toBe(true);
    const recent = await turnWithFile('newer', 'new.txt');
    await expect.poll(async () => (await chat!.get(`/api/sessions/${old.sessionId}/turns`)).json().turns[0].revertible, { timeout: 20_000 }).toBe(false);
    const pruned = (await chat.get(`/api/sessions/${old.sessionId}/turns`)).json().turns[0];
    expect(pruned).toMatchObject({ files: { added: 1 }, checkpoint: { state: 'off', note: expect.stringContaining('pruned') } });
    expect((await chat.post(`/api/sessions/${old.sessionId}/turns/${pruned.turn_id}/revert`, {})).status).toBe(409);
    const kept = (await chat.get(`/api/sessions/${recent.sessionId}/turns/${recent.entry.turn_id}/diff`)).json();
    expect(kept.files).toEqual([expect.objectContaining({ path: 'new.txt', status: 'added', patch: expect.stringContaining('+new.txt') })]);
    const back = await chat.post(`/api/sessions/${recent.sessionId}/turns/${recent.entry.turn_id}/revert`, {});
    expect(back.json()).toMatchObject({ ok: true, removed: ['new.txt'] });
    expect(readdirSync(recent.project)).not.toContain('new.txt');
  }, 90_000);
});

describe('a checkpoint of many files', () => {
  it('is written unflushed and flushed once (sync -f on the store); a small one keeps git\'s own flush; both are complete', async () => {
    // A `sync` on the service's PATH that writes down how it was run, then runs the real one.
    const bin = await mkdtemp(path.join(os.tmpdir(), 'space-sync-'));
    temps.push(bin);
    const calls = path.join(bin, 'calls.log');
    const real = ['/usr/bin/sync', '/bin/sync'].find((p) => existsSync(p))!;
    await writeFile(path.join(bin, 'sync'), `#!/bin/sh\necho "$@" >> '${calls}'\nexec ${real} "$@"\n`, { mode: 0o755 });
    const hold = path.join(bin, 'release');
    chat = await startChat({ PATH: `${bin}:${process.env.PATH}`, FAKE_CLAUDE_HOLD: hold });
    const project = path.join(chat.home, 'space-projects', 'many');
    await mkdir(path.join(project, 'src'), { recursive: true });
    for (let i = 0; i < 300; i += 1) await writeFile(path.join(project, 'src', `f${i}.txt`), `before ${i}\n`);
    const flushes = (): string[] => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []);

    // The first checkpoint stages 300 files: one syncfs of the store, none for the small one after.
    const first = await chat.turn({ agent_name: 'clia_code', agent_id: 'many', text: 'hello' });
    const entry = await completedTurn(chat.get, first.sessionId!);
    expect(entry).toMatchObject({ revertible: true, checkpoint: { state: 'recorded' }, files: { added: 0, modified: 0, deleted: 0 } });
    expect(flushes()).toEqual([expect.stringMatching(/^-f \/.*\/checkpoints\/stores\/[0-9a-f]{16}\/store\.git$/)]);

    // A turn that rewrites all 300 and adds 300: its checkpoint after is flushed the same way and is whole.
    // The turn ends only once all 600 are written ("hold"), however long the writes take.
    const res = await chat.prompt({ agent_name: 'clia_code', session_id: first.sessionId, text: 'slow hold hello' });
    const sse = await chat.stream(res.json().stream_id);
    await sse.waitFor((e) => e.event === 'text-delta', 30_000);
    for (let i = 0; i < 300; i += 1) {
      await writeFile(path.join(project, 'src', `f${i}.txt`), `after ${i}\n`);
      await writeFile(path.join(project, 'src', `g${i}.txt`), `new ${i}\n`);
    }
    await writeFile(hold, '');
    await sse.ended;
    const big = await completedTurn(chat.get, first.sessionId!);
    expect(big.files).toMatchObject({ added: 300, modified: 300, deleted: 0 });
    expect(flushes()).toHaveLength(2);
    const diff = (await chat.get(`/api/sessions/${first.sessionId}/turns/${big.turn_id}/diff`)).json();
    expect(diff.files).toHaveLength(600);
    expect(diff.files.find((f: any) => f.path === 'src/f7.txt')).toMatchObject({ status: 'modified', patch: expect.stringContaining('+after 7') });

    // Reverted: every byte is back.
    const back = await chat.post(`/api/sessions/${first.sessionId}/turns/${big.turn_id}/revert`, {});
    expect(back.status, back.text).toBe(200);
    expect(back.json().removed).toHaveLength(300);
    for (let i = 0; i < 300; i += 1) expect(readFileSync(path.join(project, 'src', `f${i}.txt`), 'utf8')).toBe(`before ${i}\n`);
    expect(readdirSync(path.join(project, 'src'))).toHaveLength(300);
  }, 90_000);
});

/** Child processes of `pid` running git, from /proc. */
function gitChildren(pid: number): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return stat.includes('(git)') && Number(fields[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('kill -9 during a checkpoint', () => {
  it('after a restart the turns list and every diff answer, and the next checkpoint works', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'space-crashcp-'));
    temps.push(home);
    const project = path.join(home, 'space-projects', 'crash');
    await mkdir(project, { recursive: true });
    const env = { SPACE_CLIA_BIN: CLAUDE_DOUBLE, SPACE_HOST: '127.0.0.1', SPACE_CHAT_HEARTBEAT_CLI_MS: '300' };
    child = await startChildService({ home, env });
    const turn = async (svc: ChildService, body: Record<string, unknown>, during?: () => Promise<void>) => {
      const res = await svc.post('/api/chat/prompt', { agent_name: 'clia_code', agent_id: 'crash', ...body });
      expect(res.status, res.text).toBe(200);
      const sse = await openSse(svc.port, `/api/chat/stream/${res.json().stream_id}`);
      if (during) {
        await sse.waitFor((e) => e.event === 'text-delta', 30_000);
        await during();
      }
      return { sessionId: res.json().session_id as string, sse };
    };
    // A turn that changes a file while it runs (the double writes nothing itself).
    const first = await turn(child, { text: 'slow hello' }, () => writeFile(path.join(project, 'during.txt'), 'written during the turn\n'));
    await first.sse.ended;
    const done = await completedTurn((t) => child!.request('GET', t), first.sessionId);
    expect(done.files).toMatchObject({ added: 1 });

    // Many new files make the next checkpoint long enough to be killed in the middle of.
    await mkdir(path.join(project, 'many'));
    for (let i = 0; i < 4000; i += 1) await writeFile(path.join(project, 'many', `f${i}.txt`), `file ${i}\n`);
    const pid = child.pid;
    void child.post('/api/chat/prompt', { agent_name: 'clia_code', session_id: first.sessionId, text: 'hello again' }).then((r) => openSse(child!.port, `/api/chat/stream/${r.json().stream_id}`)).catch(() => undefined);
    await expect.poll(() => gitChildren(pid).length, { timeout: 20_000, interval: 5 }).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await child.exited;

    child = await startChildService({ home, env });
    const list = (await child.request('GET', `/api/sessions/${first.sessionId}/turns`)).json();
    expect(list.turns[0]).toMatchObject({ turn_id: done.turn_id, status: 'done', revertible: true });
    for (const entry of list.turns) expect((await child.request('GET', `/api/sessions/${first.sessionId}/turns/${entry.turn_id}/diff`)).status).toBe(200);
    const diff = (await child.request('GET', `/api/sessions/${first.sessionId}/turns/${done.turn_id}/diff`)).json();
    expect(diff.files).toEqual([expect.objectContaining({ path: 'during.txt', status: 'added', patch: expect.stringContaining('+written during the turn') })]);
    // The store is usable: a new turn is checkpointed, and the interrupted one (if it got an entry) is not left running.
    const next = await turn(child, { session_id: first.sessionId, text: 'slow third' }, () => writeFile(path.join(project, 'third.txt'), '3\n'));
    await next.sse.ended;
    const third = await completedTurn((t) => child!.request('GET', t), first.sessionId);
    expect(third.checkpoint).toEqual({ state: 'recorded', note: null });
    expect(third.files.added).toBeGreaterThanOrEqual(1);
    const after = (await child.request('GET', `/api/sessions/${first.sessionId}/turns`)).json().turns;
    expect(after.filter((t: any) => t.status === 'running')).toEqual([]);
  }, 120_000);
});

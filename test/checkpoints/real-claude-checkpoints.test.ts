import { chmod, lstat, mkdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.js';
import { startFakeClaudeOAuth, type FakeClaudeOAuth } from '../fakes/claude-oauth.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import { claudeLaneEnv, realProgram } from '../helpers/programs.js';
import { claudeSetupToken } from '../helpers/setups.js';
import { allowedTurn } from './turns.js';
import { repoState, userRepository, type RepoState } from './user-repository.js';

/**
 * The safety net on the real Claude Code CLI (loopback-only namespace, the fake Messages
 * API): each turn's directory is checkpointed before and after it; a file written by the
 * Write tool and one changed by a shell command both show in the turn's diff; reverts go
 * newest first, byte for byte, refuse to clobber the user's later edit unless forced, can
 * themselves be reverted; and the user's own repository (status, stash, HEAD, index) is
 * exactly as before. One service for the file: real-program turns are slow here.
 */
const claude = realProgram('claude');
const TOKEN = 'sk-ant-oat01-CheckpointLaneToken_0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQ_0123';
const CODE = 'ac_checkpoint_lane_code_0123456789';

let fake: FakeAnthropic;
let oauth: FakeClaudeOAuth;
let chat: ChatService;
let project: string;
let repoBefore: RepoState;

beforeAll(async () => {
  if (!claude) return;
  fake = await startFakeAnthropic({ apiKey: TOKEN });
  oauth = await startFakeClaudeOAuth({ code: CODE, token: TOKEN });
  chat = await startChat(claudeLaneEnv(claude, fake.url, { SPACE_CHECKPOINT_MAX_FILE_BYTES: '1000000' }));
  await claudeSetupToken(chat, oauth);
  project = path.join(chat.home, 'space-projects', 'net');
  await userRepository(project);
  repoBefore = repoState(project);
}, 120_000); // a cold claude and its setup-token sign-in, slow on a loaded machine
afterAll(async () => {
  await chat?.close();
  await fake?.close();
  await oauth?.close();
});

/** One turn to its end, allowing what the CLI asks; its session and turns entry. */
const turn = (text: string, sessionId?: string, agentId = 'net') => allowedTurn(chat, { agent_name: 'clia_code', agent_id: agentId, text, ...(sessionId ? { session_id: sessionId } : {}) });

const diffOf = async (sessionId: string, turnId: string) => {
  const res = await chat.get(`/api/sessions/${sessionId}/turns/${turnId}/diff`);
  expect(res.status, res.text).toBe(200);
  return res.json();
};
const revert = (sessionId: string, turnId: string, body: Record<string, unknown> = {}) => chat.post(`/api/sessions/${sessionId}/turns/${turnId}/revert`, body);

describe.skipIf(!claude)('checkpoints around real claude turns', () => {
  let session: string;
  let writeTurn: string;
  let shellTurn: string;

  it('a tool-written file and a shell-changed file both show in their turn diff', async () => {
    const first = await turn('Please write notes.txt containing hello from the tool');
    session = first.sessionId;
    writeTurn = first.turnId;
    expect(readFileSync(path.join(project, 'notes.txt'), 'utf8')).toBe('hello from the tool');
    const diff = await diffOf(session, writeTurn);
    expect(diff).toEqual({ turn_id: writeTurn, files: [expect.objectContaining({ path: 'notes.txt', status: 'added', binary: false, additions: 1, deletions: 0 })] });
    expect(diff.files[0].patch).toContain('+hello from the tool');

    const second = await turn('Please run `sed -i s/two/TWO/ tracked.txt`', session);
    shellTurn = second.turnId;
    const shell = await diffOf(session, shellTurn);
    expect(shell.files).toEqual([expect.objectContaining({ path: 'tracked.txt', status: 'modified', binary: false, additions: 1, deletions: 1 })]);
    expect(shell.files[0].patch).toMatch(/-two\n\+TWO\n/);

    const list = (await chat.get(`/api/sessions/${session}/turns`)).json();
    expect(list.session_id).toBe(session);
    expect(list.directory).toBe(project);
    expect(list.turns.map((t: any) => [t.kind, t.status, t.revertible, t.files])).toEqual([
      ['turn', 'done', true, { added: 1, modified: 0, deleted: 0, additions: 1, deletions: 0 }],
      ['turn', 'done', true, { added: 0, modified: 1, deleted: 0, additions: 1, deletions: 1 }],
    ]);
    expect(list.turns[0]).toMatchObject({ prompt: 'Please write notes.txt containing hello from the tool', user_message_id: expect.any(String), stream_id: expect.any(String), ended_at: expect.any(String) });
  }, 180_000);

  it('the user edits the file after the turn: revert is 409 with that path and nothing changes; force restores it', async () => {
    const target = path.join(project, 'tracked.txt');
    await writeFile(target, 'one\nTWO\nthree\nuncommitted\nthe user typed this\n');
    const refused = await revert(session, shellTurn);
    expect(refused.status).toBe(409);
    expect(refused.json()).toEqual({ detail: expect.any(String), conflicts: ['tracked.txt'] });
    expect(await readFile(target, 'utf8')).toBe('one\nTWO\nthree\nuncommitted\nthe user typed this\n');
    // Put the turn's bytes back: now the revert goes through without force.
    await writeFile(target, 'one\nTWO\nthree\nuncommitted\n');
  }, 180_000);

  it('reverted newest first: the shell turn byte for byte, then the tool turn removes its file; a revert of a revert redoes', async () => {
    const shell = await revert(session, shellTurn);
    expect(shell.status, shell.text).toBe(200);
    expect(shell.json()).toEqual({ ok: true, turn_id: expect.any(String), restored: ['tracked.txt'], removed: [] });
    expect(await readFile(path.join(project, 'tracked.txt'), 'utf8')).toBe('one\ntwo\nthree\nuncommitted\n');
    expect(existsSync(path.join(project, 'notes.txt'))).toBe(true);

    const tool = await revert(session, writeTurn);
    expect(tool.json()).toEqual({ ok: true, turn_id: expect.any(String), restored: [], removed: ['notes.txt'] });
    expect(existsSync(path.join(project, 'notes.txt'))).toBe(false);
    // Every turn undone: the user's repository is as it was before the first turn.
    expect(repoState(project)).toEqual(repoBefore);

    const redo = await revert(session, tool.json().turn_id);
    expect(redo.json()).toMatchObject({ ok: true, restored: ['notes.txt'], removed: [] });
    expect(readFileSync(path.join(project, 'notes.txt'), 'utf8')).toBe('hello from the tool');
    const turns = (await chat.get(`/api/sessions/${session}/turns`)).json().turns;
    expect(turns.map((t: any) => t.kind)).toEqual(['turn', 'turn', 'revert', 'revert', 'revert']);
    expect(turns[4]).toMatchObject({ reverted_turn_id: tool.json().turn_id, status: 'done', files: { added: 1, modified: 0, deleted: 0 } });
  }, 180_000);

  it('force overwrites the user edit', async () => {
    const edited = 'the user rewrote notes\n';
    await writeFile(path.join(project, 'notes.txt'), edited);
    const turns = (await chat.get(`/api/sessions/${session}/turns`)).json().turns;
    const redo = turns[4].turn_id;
    expect((await revert(session, redo)).status).toBe(409);
    expect(await readFile(path.join(project, 'notes.txt'), 'utf8')).toBe(edited);
    const forced = await revert(session, redo, { force: true });
    expect(forced.json()).toMatchObject({ ok: true, removed: ['notes.txt'] });
    expect(existsSync(path.join(project, 'notes.txt'))).toBe(false);
    // What force overwrote is in the revert's own checkpoint: reverting that brings it back.
    const back = await revert(session, forced.json().turn_id);
    expect(back.status, back.text).toBe(200);
    expect(await readFile(path.join(project, 'notes.txt'), 'utf8')).toBe(edited);
  }, 180_000);

  it("the user's repository is exactly as before after turns, reverts and a fork: status, stash, HEAD and index", async () => {
    // notes.txt is the user's own file now (their edit, brought back); they remove it.
    await rm(path.join(project, 'notes.txt'));
    // A fork, and a turn of the fork, leave the repository alone too.
    const fork = await chat.post(`/api/sessions/${session}/fork`, {});
    expect(fork.status, fork.text).toBe(200);
    await turn('Say hello from the fork', fork.json().session_id);
    expect(repoState(project)).toEqual(repoBefore);
  }, 180_000);

  it('unknown session and turn are 404', async () => {
    expect((await chat.get('/api/sessions/no-such-session/turns')).json()).toEqual({ detail: 'Session not found' });
    expect((await chat.get('/api/sessions/no-such-session/turns')).status).toBe(404);
    const turn = await chat.get(`/api/sessions/${session}/turns/no-such-turn/diff`);
    expect(turn.status).toBe(404);
  }, 180_000);
});

describe.skipIf(!claude)('what a checkpoint leaves out, and reverts that cannot go through', () => {
  let edge: string;
  beforeAll(async () => {
    if (!claude) return;
    edge = path.join(chat.home, 'space-projects', 'edge');
    await mkdir(path.join(edge, 'dir'), { recursive: true });
    await writeFile(path.join(edge, 'a-first.txt'), 'first\n');
    await writeFile(path.join(edge, 'dir', 'f.txt'), 'in dir\n');
  });

  it('a long patch is cut at 256 KB, a binary file has no patch, a file over the bound is skipped, a nested repository is not covered', async () => {
    const made = 'seq 1 60000 > long.txt; printf "\\000\\001\\002" > bin.dat; head -c 1500000 /dev/zero > huge.bin; mkdir inner; git -C inner init -q; echo x > inner/x.txt';
    const { sessionId, turnId } = await turn(`Please run \`sh -c '${made}'\``, undefined, 'edge');
    const { files } = await diffOf(sessionId, turnId);
    expect(files.map((f: any) => f.path)).toEqual(['bin.dat', 'huge.bin', 'long.txt']);
    const [bin, huge, long] = files;
    expect(bin).toEqual({ path: 'bin.dat', status: 'added', binary: true, additions: 0, deletions: 0 });
    expect(huge).toEqual({ path: 'huge.bin', status: 'added', binary: false, additions: 0, deletions: 0, skipped: true });
    expect(long).toMatchObject({ path: 'long.txt', status: 'added', binary: false, additions: 60000, deletions: 0, truncated: true });
    expect(Buffer.byteLength(long.patch)).toBeLessThanOrEqual(256 * 1024);
    expect(long.patch.endsWith('\n')).toBe(true);
    const entry = (await chat.get(`/api/sessions/${sessionId}/turns`)).json().turns.at(-1);
    expect(entry).toMatchObject({ not_covered: ['inner'], files: { added: 3, modified: 0, deleted: 0, additions: 60000 } });
    // The revert removes what was copied and leaves the skipped file and the nested repository alone.
    const back = await revert(sessionId, turnId);
    expect(back.json()).toEqual({ ok: true, turn_id: expect.any(String), restored: [], removed: ['bin.dat', 'long.txt'] });
    expect(existsSync(path.join(edge, 'huge.bin'))).toBe(true);
    expect(existsSync(path.join(edge, 'inner', 'x.txt'))).toBe(true);
  }, 180_000);

  it('409 while a turn of the session waits for a decision; the revert goes through once it ended', async () => {
    const first = await turn("Please run `sh -c 'echo one > queued.txt'`", undefined, 'edge');
    const res = await chat.prompt({ agent_name: 'clia_code', session_id: first.sessionId, text: "Please run `sh -c 'echo two > queued.txt'`", permission_mode: 'ask' });
    const sse = await chat.stream(res.json().stream_id);
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    const busy = await revert(first.sessionId, first.turnId);
    expect(busy.status).toBe(409);
    expect(busy.json()).toEqual({ detail: expect.stringContaining('running or queued') });
    expect(readFileSync(path.join(edge, 'queued.txt'), 'utf8')).toBe('one\n');
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' });
    await sse.ended;
    await expect.poll(async () => (await revert(first.sessionId, first.turnId)).status, { timeout: 20_000 }).toBe(200);
    expect(existsSync(path.join(edge, 'queued.txt'))).toBe(false);
  }, 180_000);

  it('a revert that fails halfway puts back what it changed and answers 500 naming the file', async () => {
    const { sessionId, turnId } = await turn("Please run `sh -c 'echo changed > a-first.txt; rm -r dir'`", undefined, 'edge');
    // Where dir/f.txt must come back, the user made a file: that path cannot be written.
    await writeFile(path.join(edge, 'dir'), 'a file now\n');
    const failed = await revert(sessionId, turnId);
    expect(failed.status).toBe(500);
    expect(failed.json()).toEqual({ detail: expect.stringContaining('dir/f.txt') });
    expect(readFileSync(path.join(edge, 'a-first.txt'), 'utf8')).toBe('changed\n');
    expect(readFileSync(path.join(edge, 'dir'), 'utf8')).toBe('a file now\n');
    const turns = (await chat.get(`/api/sessions/${sessionId}/turns`)).json().turns;
    expect(turns.map((t: any) => t.kind)).toEqual(['turn']);
  }, 180_000);
});

describe.skipIf(!claude)('fork a claude conversation', () => {
  /** Every text block the model was sent in the newest call. */
  const lastCallTexts = (): string[] => {
    const call = fake.requests.filter((r) => r.url.startsWith('/v1/messages?') && Array.isArray(r.body?.messages)).at(-1)!;
    return call.body.messages.flatMap((m: any) => (typeof m.content === 'string' ? [m.content] : m.content.filter((c: any) => c.type === 'text').map((c: any) => String(c.text))));
  };

  it('fork at the first assistant message with restore_files: later files reverted, the fork sends the first exchange only, the original keeps all', async () => {
    const forky = path.join(chat.home, 'space-projects', 'forky');
    const first = await turn('Please write a.txt containing first file', undefined, 'forky');
    await turn('Please write b.txt containing second file', first.sessionId, 'forky');
    const messages = (await chat.get(`/api/messages/${first.sessionId}`)).json().messages;
    const firstAssistant = messages.find((m: any) => m.role === 'assistant');
    expect(firstAssistant.text).toBe("I'll write that file.");

    expect((await chat.post(`/api/sessions/${first.sessionId}/fork`, { message_id: 'no-such-message' })).status).toBe(400);
    // The user changed b.txt since: 409 with that path, no file touched, no fork made.
    const sessionsBefore = (await chat.get('/api/sessions')).json().total;
    await writeFile(path.join(forky, 'b.txt'), 'the user edited b\n');
    const refused = await chat.post(`/api/sessions/${first.sessionId}/fork`, { message_id: firstAssistant.id, restore_files: true });
    expect(refused.status).toBe(409);
    expect(refused.json()).toEqual({ detail: expect.any(String), conflicts: ['b.txt'] });
    expect(readFileSync(path.join(forky, 'b.txt'), 'utf8')).toBe('the user edited b\n');
    expect((await chat.get('/api/sessions')).json().total).toBe(sessionsBefore);
    await writeFile(path.join(forky, 'b.txt'), 'second file');
    const res = await chat.post(`/api/sessions/${first.sessionId}/fork`, { message_id: firstAssistant.id, restore_files: true });
    expect(res.status, res.text).toBe(200);
    const forkId = res.json().session_id;
    expect(existsSync(path.join(forky, 'b.txt'))).toBe(false);
    expect(readFileSync(path.join(forky, 'a.txt'), 'utf8')).toBe('first file');
    const original = (await chat.get(`/api/sessions/${first.sessionId}`)).json();
    const listed = (await chat.get('/api/sessions')).json().sessions.find((s: any) => s.session_id === forkId);
    expect(listed).toMatchObject({ title: `${original.title} (fork)`, agent_name: 'clia_code', agent_id: 'forky', forked_from: { session_id: first.sessionId, message_id: firstAssistant.id } });

    await turn('Say hello from the fork', forkId, 'forky');
    const forkSent = lastCallTexts();
    expect(forkSent.some((t) => t.includes('Please write a.txt containing first file'))).toBe(true);
    expect(forkSent.some((t) => t.includes('b.txt'))).toBe(false);
    expect(forkSent.at(-1)).toBe('Say hello from the fork');

    await turn('Say hello from the original', first.sessionId, 'forky');
    const originalSent = lastCallTexts();
    expect(originalSent.some((t) => t.includes('Please write a.txt containing first file'))).toBe(true);
    expect(originalSent.some((t) => t.includes('Please write b.txt containing second file'))).toBe(true);
    expect(originalSent.some((t) => t.includes('Say hello from the fork'))).toBe(false);
    expect(originalSent.at(-1)).toBe('Say hello from the original');
  }, 240_000);
  it('a shell turn that deletes a file, makes a file a folder, changes a mode and adds a link: all in its diff, all put back by its revert', async () => {
    const dir = path.join(chat.home, 'space-projects', 'shapes');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'gone.txt'), 'deleted by the turn\n');
    await writeFile(path.join(dir, 'shape.txt'), 'a file that becomes a folder\n');
    await writeFile(path.join(dir, 'run.sh'), 'echo run\n');
    await chmod(path.join(dir, 'run.sh'), 0o644);
    const { sessionId, turnId } = await turn('Please run `rm gone.txt shape.txt && mkdir shape.txt && echo inner > shape.txt/inner && chmod 755 run.sh && ln -s run.sh link`', undefined, 'shapes');
    const diff = await diffOf(sessionId, turnId);
    expect(diff.files.map((f: any) => [f.path, f.status])).toEqual([
      ['gone.txt', 'deleted'],
      ['link', 'added'],
      ['run.sh', 'modified'],
      ['shape.txt', 'deleted'],
      ['shape.txt/inner', 'added'],
    ]);
    const undone = await revert(sessionId, turnId);
    expect(undone.status, undone.text).toBe(200);
    expect(await readFile(path.join(dir, 'gone.txt'), 'utf8')).toBe('deleted by the turn\n');
    expect(await readFile(path.join(dir, 'shape.txt'), 'utf8')).toBe('a file that becomes a folder\n');
    expect((await stat(path.join(dir, 'run.sh'))).mode & 0o777).toBe(0o644);
    expect(existsSync(path.join(dir, 'link'))).toBe(false);
    // The revert's own entry holds the way back (redo).
    const redo = await revert(sessionId, undone.json().turn_id);
    expect(redo.status, redo.text).toBe(200);
    expect((await lstat(path.join(dir, 'link'))).isSymbolicLink()).toBe(true);
    expect(await readlink(path.join(dir, 'link'))).toBe('run.sh');
    expect(await readFile(path.join(dir, 'shape.txt', 'inner'), 'utf8')).toBe('inner\n');
    expect((await stat(path.join(dir, 'run.sh'))).mode & 0o777).toBe(0o755);
  }, 180_000);
});

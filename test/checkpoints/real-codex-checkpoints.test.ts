import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponses, type FakeResponses } from '../fakes/openai-responses.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import { realProgram } from '../helpers/programs.js';
import { codexLaneHome } from '../helpers/setups.js';
import { allowedTurn } from './turns.js';
import { repoState, userRepository } from './user-repository.js';

/**
 * The safety net on the real codex app-server (loopback-only namespace, the fake Responses
 * API): a file added by apply_patch (a tool) and one changed by a shell command both show in
 * their turn's diff (codex's own turn diff sees only apply_patch), and revert newest first;
 * a revert refuses the user's later edit unless forced and can be reverted itself; the user's
 * own repository is left exactly as it was.
 */
const codex = realProgram('codex');
const KEY = 'sk-provb-real-checkpoints';

let fake: FakeResponses;
let chat: ChatService;
let project: string;
beforeAll(async () => {
  if (!codex) return;
  fake = await startFakeResponses({ apiKey: KEY });
  chat = await startChat({ SPACE_CLIB_BIN: codex });
  const codexHome = chat.service.ctx.config.paths.codexHome;
  if (codex) await codexLaneHome({ codex, home: chat.home, codexHome, responsesUrl: fake.url, provbKey: KEY });
  project = path.join(chat.home, 'space-projects', 'cx');
  await mkdir(project, { recursive: true });
  await writeFile(path.join(project, 'existing.txt'), 'alpha\nbeta\n');
}, 60_000);
afterAll(async () => {
  await chat?.close();
  await fake?.close();
});

/** One turn to its end, allowing what codex asks; its session and turns entry. */
const turn = (text: string, sessionId?: string) => allowedTurn(chat, { agent_name: 'clib', agent_id: 'cx', text, ...(sessionId ? { session_id: sessionId } : {}) });

describe.skipIf(!codex)('checkpoints around real codex turns', () => {
  it('an apply_patch file and a shell-changed file show in their diffs; reverted newest first, byte for byte', async () => {
    const first = await turn('[[patch: patched.txt made by apply_patch]] add the file');
    expect(readFileSync(path.join(project, 'patched.txt'), 'utf8')).toBe('made by apply_patch\n');
    const patched = (await chat.get(`/api/sessions/${first.sessionId}/turns/${first.turnId}/diff`)).json();
    expect(patched.files).toEqual([expect.objectContaining({ path: 'patched.txt', status: 'added', additions: 1, deletions: 0, patch: expect.stringContaining('+made by apply_patch') })]);

    const second = await turn("[[shell: sed -i s/beta/BETA/ existing.txt]] change it", first.sessionId);
    expect(readFileSync(path.join(project, "existing.txt"), "utf8")).toBe("alpha\nBETA\n");
    const shell = (await chat.get(`/api/sessions/${first.sessionId}/turns/${second.turnId}/diff`)).json();
    expect(shell.files).toEqual([expect.objectContaining({ path: 'existing.txt', status: 'modified', additions: 1, deletions: 1, patch: expect.stringMatching(/-beta\n\+BETA\n/) })]);

    const undoShell = await chat.post(`/api/sessions/${first.sessionId}/turns/${second.turnId}/revert`, {});
    expect(undoShell.json()).toMatchObject({ ok: true, restored: ['existing.txt'], removed: [] });
    expect(readFileSync(path.join(project, 'existing.txt'), 'utf8')).toBe('alpha\nbeta\n');
    expect(existsSync(path.join(project, 'patched.txt'))).toBe(true);
    const undoPatch = await chat.post(`/api/sessions/${first.sessionId}/turns/${first.turnId}/revert`, {});
    expect(undoPatch.json()).toMatchObject({ ok: true, restored: [], removed: ['patched.txt'] });
    expect(existsSync(path.join(project, 'patched.txt'))).toBe(false);
    // Reverting the revert brings the file back.
    const redo = await chat.post(`/api/sessions/${first.sessionId}/turns/${undoPatch.json().turn_id}/revert`, {});
    expect(redo.json()).toMatchObject({ ok: true, restored: ['patched.txt'], removed: [] });
    expect(readFileSync(path.join(project, 'patched.txt'), 'utf8')).toBe('made by apply_patch\n');
    // The user edits it after: reverting the redo is 409 naming it, their bytes kept; force removes it.
    await writeFile(path.join(project, 'patched.txt'), 'the user typed this\n');
    const refused = await chat.post(`/api/sessions/${first.sessionId}/turns/${redo.json().turn_id}/revert`, {});
    expect(refused.status).toBe(409);
    expect(refused.json()).toEqual({ detail: expect.any(String), conflicts: ['patched.txt'] });
    expect(readFileSync(path.join(project, 'patched.txt'), 'utf8')).toBe('the user typed this\n');
    expect((await chat.post(`/api/sessions/${first.sessionId}/turns/${redo.json().turn_id}/revert`, { force: true })).json()).toMatchObject({ ok: true, removed: ['patched.txt'] });
    expect(existsSync(path.join(project, 'patched.txt'))).toBe(false);
    const list = (await chat.get(`/api/sessions/${first.sessionId}/turns`)).json();
    expect(list.turns.map((t: any) => [t.kind, t.status])).toEqual([
      ['turn', 'done'],
      ['turn', 'done'],
      ['revert', 'done'],
      ['revert', 'done'],
      ['revert', 'done'],
      ['revert', 'done'],
    ]);
  }, 240_000);
});

describe.skipIf(!codex)("the user's repository", () => {
  it('is exactly as before after a turn, its revert, a fork and a turn of the fork: status, stash, HEAD and index', async () => {
    const dir = path.join(chat.home, 'space-projects', 'cxrepo');
    await userRepository(dir);
    const before = repoState(dir);
    const inRepo = (text: string, sessionId?: string) => allowedTurn(chat, { agent_name: 'clib', agent_id: 'cxrepo', text, ...(sessionId ? { session_id: sessionId } : {}) });
    const made = await inRepo('[[shell: touch from-codex.txt]] make it');
    expect(repoState(dir).status).toContain('from-codex.txt');
    expect((await chat.post(`/api/sessions/${made.sessionId}/turns/${made.turnId}/revert`, {})).json()).toMatchObject({ ok: true, removed: ['from-codex.txt'] });
    const fork = await chat.post(`/api/sessions/${made.sessionId}/fork`, {});
    expect(fork.status, fork.text).toBe(200);
    await inRepo('Say hello from the fork', fork.json().session_id);
    expect(repoState(dir)).toEqual(before);
  }, 240_000);
});

describe.skipIf(!codex)('fork a codex conversation', () => {
  it('fork at the first assistant message (thread/fork through that turn): the fork sends the first exchange only, the original keeps all', async () => {
    const first = await turn('Say first thing');
    await turn('Say second thing', first.sessionId);
    const messages = (await chat.get(`/api/messages/${first.sessionId}`)).json().messages;
    const firstAssistant = messages.find((m: any) => m.role === 'assistant');
    expect(firstAssistant.text).toBe('Hello from fake-openai. You said: Say first thing');

    expect((await chat.post(`/api/sessions/${first.sessionId}/fork`, { message_id: 'no-such-message' })).status).toBe(400);
    const res = await chat.post(`/api/sessions/${first.sessionId}/fork`, { message_id: firstAssistant.id });
    expect(res.status, res.text).toBe(200);
    const forkId = res.json().session_id;
    const original = (await chat.get(`/api/sessions/${first.sessionId}`)).json();
    const listed = (await chat.get('/api/sessions')).json().sessions.find((s: any) => s.session_id === forkId);
    expect(listed).toMatchObject({ title: `${original.title} (fork)`, agent_name: 'clib', agent_id: 'cx', forked_from: { session_id: first.sessionId, message_id: firstAssistant.id } });
    expect((await chat.get(`/api/messages/${forkId}`)).json().messages.map((m: any) => m.text)).toEqual(['Say first thing', 'Hello from fake-openai. You said: Say first thing']);

    await turn('Say in the fork', forkId);
    const forkSent = fake.requests.at(-1)!.userTexts;
    expect(forkSent.some((t: string) => t.includes('Say first thing'))).toBe(true);
    expect(forkSent.some((t: string) => t.includes('Say second thing'))).toBe(false);
    expect(forkSent.at(-1)).toContain('Say in the fork');

    await turn('Say in the original', first.sessionId);
    const originalSent = fake.requests.at(-1)!.userTexts;
    expect(originalSent.some((t: string) => t.includes('Say second thing'))).toBe(true);
    expect(originalSent.some((t: string) => t.includes('Say in the fork'))).toBe(false);
  }, 240_000);
});

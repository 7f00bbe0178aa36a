import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChat, type FakeChat } from '../fakes/openai-chat.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import { realProgram } from '../helpers/programs.js';
import { openclawOnboard } from '../helpers/setups.js';
import { allowedTurn } from './turns.js';
import { repoState, userRepository } from './user-repository.js';

/**
 * The safety net on the real OpenClaw gateway (loopback-only namespace, the fake provider's
 * model runs OpenClaw's `exec` with RUN_CMD<command>, allowed through `accept_edits`): its turns
 * work in the agent's workspace, which is checkpointed around each of them; a new session's
 * turn starts at the prompt, so its checkpoint before is taken there. Reverts refuse to clobber
 * the user's later edit unless forced and can be reverted themselves; a repository the user
 * keeps in the workspace is left exactly as it was. Forks go through the gateway's own
 * `sessions.fork` (and `sessions.create` with `fork` for a whole conversation).
 */
const openclaw = realProgram('openclaw');
const node24 = realProgram('node24');
const KEY = 'sk-provb-real-openclaw-checkpoints';

let fake: FakeChat;
let chat: ChatService;
beforeAll(async () => {
  if (!openclaw) return;
  fake = await startFakeChat();
  chat = await startChat({ SPACE_RUNTIMEA_BIN: openclaw, SPACE_RUNTIMEA_NODE: node24!, SPACE_RUNTIMEA_PORT: '0' });
  await openclawOnboard({ node: node24!, openclaw, home: chat.home, stateDir: path.join(chat.home, '.runtimea'), providerUrl: fake.url, apiKey: KEY, auth: { mode: 'token', token: 'user-gateway-token-checkpoints-0123' } });
  await writeFile(path.join(chat.home, '.runtimea', '.env'), `PROVB_API_KEY=${KEY}\n`, { mode: 0o600 });
  await chat.service.ctx.runtimeaGateway.ensure();
}, 180_000);
afterAll(async () => {
  await chat?.close();
  await fake?.close();
}, 30_000);

const turn = (text: string, sessionId?: string) => allowedTurn(chat, { agent_name: 'runtimea', text, permission_mode: 'accept_edits', ...(sessionId ? { session_id: sessionId } : {}) });

describe.skipIf(!openclaw)('checkpoints around real OpenClaw turns', () => {
  it("a command's new file and its change to another show in their turns' diffs, in the agent's workspace; reverted newest first", async () => {
    const first = await turn('RUN_CMD<touch made-by-agent.txt>');
    const list = (await chat.get(`/api/sessions/${first.sessionId}/turns`)).json();
    const workspace = list.directory as string;
    expect(existsSync(path.join(workspace, 'made-by-agent.txt'))).toBe(true);
    expect((await chat.get(`/api/sessions/${first.sessionId}/turns/${first.turnId}/diff`)).json().files).toEqual([
      { path: 'made-by-agent.txt', status: 'added', binary: false, additions: 0, deletions: 0, patch: expect.stringContaining('new file mode') },
    ]);

    await writeFile(path.join(workspace, 'note.txt'), 'alpha\n');
    const second = await turn('RUN_CMD<sed -i s/alpha/beta/ note.txt>', first.sessionId);
    expect(readFileSync(path.join(workspace, 'note.txt'), 'utf8')).toBe('beta\n');
    expect((await chat.get(`/api/sessions/${first.sessionId}/turns/${second.turnId}/diff`)).json().files).toEqual([
      expect.objectContaining({ path: 'note.txt', status: 'modified', additions: 1, deletions: 1, patch: expect.stringMatching(/-alpha\n\+beta\n/) }),
    ]);

    // The user edits the file after the turn: 409 naming it, their bytes kept; force restores.
    await writeFile(path.join(workspace, 'note.txt'), 'beta\nthe user typed this\n');
    const refused = await chat.post(`/api/sessions/${first.sessionId}/turns/${second.turnId}/revert`, {});
    expect(refused.status).toBe(409);
    expect(refused.json()).toEqual({ detail: expect.any(String), conflicts: ['note.txt'] });
    expect(readFileSync(path.join(workspace, 'note.txt'), 'utf8')).toBe('beta\nthe user typed this\n');
    expect((await chat.post(`/api/sessions/${first.sessionId}/turns/${second.turnId}/revert`, { force: true })).json()).toMatchObject({ ok: true, restored: ['note.txt'], removed: [] });
    expect(readFileSync(path.join(workspace, 'note.txt'), 'utf8')).toBe('alpha\n');
    expect(existsSync(path.join(workspace, 'made-by-agent.txt'))).toBe(true);
    const undoFirst = await chat.post(`/api/sessions/${first.sessionId}/turns/${first.turnId}/revert`, {});
    expect(undoFirst.json()).toMatchObject({ ok: true, restored: [], removed: ['made-by-agent.txt'] });
    expect(existsSync(path.join(workspace, 'made-by-agent.txt'))).toBe(false);
    // Reverting the revert brings the change back.
    expect((await chat.post(`/api/sessions/${first.sessionId}/turns/${undoFirst.json().turn_id}/revert`, {})).json()).toMatchObject({ ok: true, restored: ['made-by-agent.txt'], removed: [] });
    expect(existsSync(path.join(workspace, 'made-by-agent.txt'))).toBe(true);
  }, 240_000);

  it("a file written by OpenClaw's own write tool shows in its turn's diff, and its revert removes it", async () => {
    const wrote = await turn('WRITE_FILE<written-by-tool.txt|hello from the write tool>');
    const workspace = (await chat.get(`/api/sessions/${wrote.sessionId}/turns`)).json().directory as string;
    expect(readFileSync(path.join(workspace, 'written-by-tool.txt'), 'utf8')).toBe('hello from the write tool');
    expect((await chat.get(`/api/sessions/${wrote.sessionId}/turns/${wrote.turnId}/diff`)).json().files).toEqual([
      expect.objectContaining({ path: 'written-by-tool.txt', status: 'added', additions: 1, deletions: 0, patch: expect.stringContaining('+hello from the write tool') }),
    ]);
    expect((await chat.post(`/api/sessions/${wrote.sessionId}/turns/${wrote.turnId}/revert`, {})).json()).toMatchObject({ ok: true, restored: [], removed: ['written-by-tool.txt'] });
    expect(existsSync(path.join(workspace, 'written-by-tool.txt'))).toBe(false);
  }, 240_000);

  it("the user's repository in the workspace is exactly as before after a turn, its revert and a fork: status, stash, HEAD and index", async () => {
    const probe = await turn('Say where');
    const workspace = (await chat.get(`/api/sessions/${probe.sessionId}/turns`)).json().directory as string;
    await userRepository(workspace);
    const before = repoState(workspace);
    const made = await turn('RUN_CMD<touch from-the-agent.txt>', probe.sessionId);
    expect(repoState(workspace).status).toContain('from-the-agent.txt');
    expect((await chat.post(`/api/sessions/${probe.sessionId}/turns/${made.turnId}/revert`, {})).json()).toMatchObject({ ok: true, removed: ['from-the-agent.txt'] });
    const fork = await chat.post(`/api/sessions/${probe.sessionId}/fork`, {});
    expect(fork.status, fork.text).toBe(200);
    await turn('Say hello from the fork', fork.json().session_id);
    expect(repoState(workspace)).toEqual(before);
    await rm(path.join(workspace, '.git'), { recursive: true, force: true });
  }, 300_000);

  it('fork at the first assistant message (sessions.fork before the next prompt): the fork sends the first exchange only, the original keeps all', async () => {
    const first = await turn('Say first thing');
    await turn('Say second thing', first.sessionId);
    const messages = (await chat.get(`/api/messages/${first.sessionId}`)).json().messages;
    const firstAssistant = messages.find((m: any) => m.role === 'assistant');
    expect(firstAssistant.text).toContain('you said');

    const unknown = await chat.post(`/api/sessions/${first.sessionId}/fork`, { message_id: 'no-such-message' });
    expect(unknown.status).toBe(400);
    expect(unknown.json()).toEqual({ detail: 'message_id is not a message of this session' });
    const res = await chat.post(`/api/sessions/${first.sessionId}/fork`, { message_id: firstAssistant.id });
    expect(res.status, res.text).toBe(200);
    const forkId = res.json().session_id;
    expect(forkId).not.toBe(first.sessionId);
    const original = (await chat.get(`/api/sessions/${first.sessionId}`)).json();
    // Its first prompt, read once the gateway's store had it (the row comes before the transcript).
    expect(original.title).toContain('Say first thing');
    const listed = (await chat.get('/api/sessions')).json().sessions.find((s: any) => s.session_id === forkId);
    expect(listed).toMatchObject({ title: `${original.title} (fork)`, agent_name: 'runtimea', forked_from: { session_id: first.sessionId, message_id: firstAssistant.id } });
    expect((await chat.get(`/api/messages/${forkId}`)).json().messages.map((m: any) => m.text)).toEqual(messages.slice(0, messages.indexOf(firstAssistant) + 1).map((m: any) => m.text));

    await turn('Say in the fork', forkId);
    const forkSent = JSON.stringify(fake.requests.at(-1)!.users);
    expect(forkSent).toContain('Say first thing');
    expect(forkSent).not.toContain('Say second thing');
    expect(fake.requests.at(-1)!.text).toContain('Say in the fork');

    await turn('Say in the original', first.sessionId);
    const originalSent = JSON.stringify(fake.requests.at(-1)!.users);
    expect(originalSent).toContain('Say first thing');
    expect(originalSent).toContain('Say second thing');
    expect(originalSent).not.toContain('Say in the fork');
  }, 300_000);

  it('a fork with restore_files: the files go back to after the turn that holds the message (later turns reverted through the checkpoints)', async () => {
    const first = await turn('RUN_CMD<touch fork-one.txt>');
    const workspace = (await chat.get(`/api/sessions/${first.sessionId}/turns`)).json().directory as string;
    await turn('RUN_CMD<touch fork-two.txt>', first.sessionId);
    expect(existsSync(path.join(workspace, 'fork-two.txt'))).toBe(true);
    const messages = (await chat.get(`/api/messages/${first.sessionId}`)).json().messages;
    const firstAssistant = messages.find((m: any) => m.role === 'assistant');

    const res = await chat.post(`/api/sessions/${first.sessionId}/fork`, { message_id: firstAssistant.id, restore_files: true });
    expect(res.status, res.text).toBe(200);
    expect(existsSync(path.join(workspace, 'fork-one.txt'))).toBe(true);
    expect(existsSync(path.join(workspace, 'fork-two.txt'))).toBe(false);
    const turns = (await chat.get(`/api/sessions/${first.sessionId}/turns`)).json().turns;
    expect(turns.map((t: any) => t.kind)).toEqual(['turn', 'turn', 'revert']);
    expect((await chat.get(`/api/messages/${res.json().session_id}`)).json().messages.map((m: any) => m.text)).toEqual(messages.slice(0, messages.indexOf(firstAssistant) + 1).map((m: any) => m.text));
  }, 300_000);

  it('a fork of the whole conversation (no message_id) holds every message; a second fork of the same title is numbered', async () => {
    const first = await turn('Say only thing');
    const messages = (await chat.get(`/api/messages/${first.sessionId}`)).json().messages.map((m: any) => m.text);
    const original = (await chat.get(`/api/sessions/${first.sessionId}`)).json();
    const res = await chat.post(`/api/sessions/${first.sessionId}/fork`, {});
    expect(res.status, res.text).toBe(200);
    const forkId = res.json().session_id;
    expect((await chat.get(`/api/sessions/${forkId}`)).json()).toMatchObject({ title: `${original.title} (fork)`, forked_from: { session_id: first.sessionId, message_id: null } });
    expect((await chat.get(`/api/messages/${forkId}`)).json().messages.map((m: any) => m.text)).toEqual(messages);

    await turn('Say after the whole fork', forkId);
    const sent = JSON.stringify(fake.requests.at(-1)!.users);
    expect(sent).toContain('Say only thing');
    expect(fake.requests.at(-1)!.text).toContain('Say after the whole fork');

    const again = await chat.post(`/api/sessions/${first.sessionId}/fork`, {});
    expect(again.status, again.text).toBe(200);
    expect((await chat.get(`/api/sessions/${again.json().session_id}`)).json().title).toBe(`${original.title} (fork) 2`);
  }, 300_000);
});

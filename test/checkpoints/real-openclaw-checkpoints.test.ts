import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChat, type FakeChat } from '../fakes/openai-chat.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import { realProgram } from '../helpers/programs.js';
import { openclawOnboard } from '../helpers/setups.js';
import { allowedTurn } from './turns.js';

/**
 * The safety net on the real OpenClaw gateway (loopback-only namespace, the fake provider's
 * model runs OpenClaw's `exec` with RUN_CMD<command>, allowed through `accept_edits`): its turns
 * work in the agent's workspace, which is checkpointed around each of them; a new session's
 * turn starts at the prompt, so its checkpoint before is taken there.
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

    expect((await chat.post(`/api/sessions/${first.sessionId}/turns/${second.turnId}/revert`, {})).json()).toMatchObject({ ok: true, restored: ['note.txt'], removed: [] });
    expect(readFileSync(path.join(workspace, 'note.txt'), 'utf8')).toBe('alpha\n');
    expect((await chat.post(`/api/sessions/${first.sessionId}/turns/${first.turnId}/revert`, {})).json()).toMatchObject({ ok: true, restored: [], removed: ['made-by-agent.txt'] });
    expect(existsSync(path.join(workspace, 'made-by-agent.txt'))).toBe(false);
  }, 240_000);

  it('fork is 400 on runtimea (no fork primitive wired yet), naming the runtime', async () => {
    const sessions = (await chat.get('/api/sessions')).json().sessions;
    const id = sessions.find((s: { agent_name: string }) => s.agent_name === 'runtimea').session_id;
    const res = await chat.post(`/api/sessions/${id}/fork`, {});
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'The runtimea runtime cannot fork a conversation' });
  });
});

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startChat, type ChatService } from '../helpers/chat.js';
import { openSse } from '../helpers/sse.js';

/**
 * `turn-checkpointed` and `files-reverted` on /api/events (the CLI double runs the turn; the
 * file changes while it runs): the first comes with the turn's counts before `turn-ended`,
 * the second with the revert entry's id and its paths.
 */
let chat: ChatService | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

describe('checkpoint events', () => {
  it('turn-checkpointed before turn-ended, then files-reverted', async () => {
    chat = await startChat({ SPACE_CHAT_HEARTBEAT_CLI_MS: '300' });
    const project = path.join(chat.home, 'space-projects', 'ev');
    await mkdir(project, { recursive: true });
    const events = await openSse(chat.port, '/api/events');
    const res = await chat.prompt({ agent_name: 'clia_code', agent_id: 'ev', text: 'slow hello' });
    const { stream_id: streamId, session_id: sessionId } = res.json();
    const sse = await chat.stream(streamId);
    await sse.waitFor((e) => e.event === 'text-delta', 30_000);
    await writeFile(path.join(project, 'ev.txt'), 'one\n');
    await sse.ended;
    const ended = await events.waitFor((e) => e.event === 'turn-ended' && e.data.session_id === sessionId, 20_000);
    const named = events.named().filter((e) => e.data?.session_id === sessionId).map((e) => e.event);
    expect(named.indexOf('turn-checkpointed')).toBeGreaterThan(-1);
    expect(named.indexOf('turn-checkpointed')).toBeLessThan(named.indexOf('turn-ended'));
    const checkpointed = events.named().find((e) => e.event === 'turn-checkpointed')!;
    const turn = (await chat.get(`/api/sessions/${sessionId}/turns`)).json().turns[0];
    expect(checkpointed.data).toEqual({ session_id: sessionId, turn_id: turn.turn_id, files: { added: 1, modified: 0, deleted: 0, additions: 1, deletions: 0 } });
    expect(ended.data.stream_id).toBe(streamId);

    const reverted = (await chat.post(`/api/sessions/${sessionId}/turns/${turn.turn_id}/revert`, {})).json();
    const event = await events.waitFor((e) => e.event === 'files-reverted', 10_000);
    expect(event.data).toEqual({ session_id: sessionId, turn_id: reverted.turn_id, restored: [], removed: ['ev.txt'] });
    events.close();
  }, 60_000);
});

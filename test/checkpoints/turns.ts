import { expect } from 'vitest';
import type { ChatService } from '../helpers/chat.js';
import type { TestResponse } from '../helpers/service.js';

/** The session's newest turns entry once it is complete (`done`). */
export async function completedTurn(get: (target: string) => Promise<TestResponse>, sessionId: string): Promise<any> {
  let last: any;
  await expect
    .poll(async () => {
      last = (await get(`/api/sessions/${sessionId}/turns`)).json().turns?.at(-1);
      return last?.status;
    }, { timeout: 20_000 })
    .toBe('done');
  return last;
}

/** One turn to its end in `ask` mode, allowing everything the program asks; its session and turns entry. */
export async function allowedTurn(chat: ChatService, body: Record<string, unknown>): Promise<{ sessionId: string; turnId: string }> {
  const res = await chat.prompt({ permission_mode: 'ask', ...body });
  expect(res.status, res.text).toBe(200);
  const { stream_id: streamId, session_id: sessionId } = res.json();
  const sse = await chat.stream(streamId);
  const answered = new Set<string>();
  for (;;) {
    const asked = await Promise.race([sse.waitFor((e) => e.event === 'permission-request' && !answered.has(e.data.request_id), 60_000).catch(() => undefined), sse.ended.then(() => undefined)]);
    if (!asked) break;
    answered.add(asked.data.request_id);
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' });
  }
  expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
  return { sessionId, turnId: (await completedTurn(chat.get, sessionId)).turn_id };
}

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openSse } from '../helpers/sse.js';
import { descendants, expectAlive, startAdversary, type TestService } from './harness.js';

/**
 * The other two runtimes under faults, through /api/chat only: the runtimea gateway dying
 * mid-turn or hanging, codex's app-server SIGKILLed mid-turn or slow; abort, a client that
 * goes away, and shutdown. One terminal event per turn, the next turn works, and no process
 * of the service outlives its service. (clia's faults are in chat.test.ts.)
 */
const BIN = path.resolve(import.meta.dirname, '../fakes/bin');
const RUNTIMES = [
  {
    name: 'runtimea',
    env: { SPACE_RUNTIMEA_BIN: path.join(BIN, 'openclaw.mjs'), SPACE_RUNTIMEA_NODE: path.join(BIN, 'node24'), SPACE_RUNTIMEA_PORT: '0', SPACE_CHAT_HEARTBEAT_RUNTIMEA_MS: '300' },
    crash: '[[crash]] boom',
    hang: '[[hang]] wait',
    ok: 'hello',
  },
  { name: 'clib', env: { SPACE_CLIB_BIN: path.join(BIN, 'codex'), SPACE_CHAT_HEARTBEAT_CLI_MS: '300' }, crash: '[[crash]] boom', hang: '[[slow]] wait', ok: 'hello' },
] as const;

describe.each(RUNTIMES)('$name', (rt) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startAdversary({ env: { ...rt.env, SPACE_CHAT_ABORT_GRACE_MS: '500' } });
    await mkdir(path.join(svc.home, '.runtimea'), { recursive: true });
    await writeFile(path.join(svc.home, '.runtimea', '.env'), 'PROVB_API_KEY=sk-provb-adversarial\n');
  });
  afterAll(async () => {
    await svc.close();
    expect(descendants()).toEqual([]);
  });
  afterEach(async () => {
    await expectAlive(svc.port);
  });

  async function turn(text: string) {
    const res = await svc.post('/api/chat/prompt', { text, agent_name: rt.name });
    expect(res.status, res.text).toBe(200);
    const streamId = res.json().stream_id as string;
    return { streamId, sse: await openSse(svc.port, `/api/chat/stream/${streamId}`) };
  }
  const terminal = (events: Array<{ event?: string }>) => events.filter((e) => e.event === 'done' || e.event === 'agent-error').map((e) => e.event);

  it('a program that dies mid-turn: one agent-error, no done; the next turn works', async () => {
    const { sse } = await turn(rt.crash);
    await sse.ended;
    expect(terminal(sse.events)).toEqual(['agent-error']);
    const next = await turn(rt.ok);
    await next.sse.ended;
    expect(terminal(next.sse.events)).toEqual(['done']);
  });

  it('a turn that hangs is aborted: done {aborted}, and the stream id is gone', async () => {
    const { streamId, sse } = await turn(rt.hang);
    await sse.waitFor((e) => e.event === 'heartbeat' || e.event === 'text-delta', 20_000);
    expect((await svc.post('/api/chat/abort', { stream_id: streamId })).json()).toEqual({ ok: true });
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
    const again = await openSse(svc.port, `/api/chat/stream/${streamId}`);
    await again.ended;
    expect(again.named()).toEqual([{ event: 'error', data: { error_message: 'Stream not found' } }]);
  });

  it('a client that goes away mid-turn does not stop the turn; a reconnect gets its end', async () => {
    const { streamId, sse } = await turn(rt.ok);
    sse.close();
    const again = await openSse(svc.port, `/api/chat/stream/${streamId}`);
    await again.ended;
    expect(terminal(again.events)).toEqual(['done']);
  });

  it('shutdown with a turn hanging ends its stream and leaves no process', async () => {
    const local = await startAdversary({ env: { ...rt.env, SPACE_CHAT_ABORT_GRACE_MS: '500' } });
    try {
      const res = await local.post('/api/chat/prompt', { text: rt.hang, agent_name: rt.name });
      const sse = await openSse(local.port, `/api/chat/stream/${res.json().stream_id}`);
      await sse.waitFor((e) => e.event === 'heartbeat' || e.event === 'text-delta', 20_000);
      // A heartbeat can come before the program is spawned on a loaded machine: the turn hangs once it runs.
      await expect.poll(() => local.service.ctx.supervisor.size, { timeout: 20_000 }).toBeGreaterThan(0);
      await local.service.close();
      await sse.ended;
      expect(terminal(sse.events)).toHaveLength(1);
      expect(local.service.ctx.supervisor.size).toBe(0);
    } finally {
      await local.close();
    }
  });
});

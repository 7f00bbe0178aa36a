import { get, type IncomingMessage } from 'node:http';
import { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatFrame, type SseStream } from '../../service/http/sse.js';
import { startService, type TestService } from '../helpers/service.js';

const opened: SseStream[] = [];
let floodDrainListeners = 0;
let svc: TestService;
beforeAll(async () => {
  svc = await startService({
    extraRoutes: (ctx) => {
      const r = Router();
      r.get('/sse/quiet', (_req, res) => {
        opened.push(ctx.streams.start(res, { heartbeatMs: 40 }));
      });
      r.get('/sse/flood', (_req, res) => {
        const stream = ctx.streams.start(res, { heartbeatMs: 0, maxBufferedBytes: 256 * 1024 });
        opened.push(stream);
        // A producer that ignores backpressure: the cap must cut it off, not buffer forever.
        for (let i = 0; i < 400; i++) void stream.send({ event: 'text-delta', data: { text: 'x'.repeat(16 * 1024) } });
        floodDrainListeners = res.listenerCount('drain');
      });
      return [r];
    },
  });
});
afterAll(() => svc.close());

function open(path: string): Promise<IncomingMessage> {
  return new Promise((resolve) => get({ host: '127.0.0.1', port: svc.port, path }, resolve));
}

describe('SSE writer', () => {
  it('frames id, event and JSON data so text cannot forge events', () => {
    expect(formatFrame({ id: 3, event: 'text-delta', data: { text: 'a\n\nevent: done\ndata: {}' } })).toBe(
      'id: 3\nevent: text-delta\ndata: {"text":"a\\n\\nevent: done\\ndata: {}"}\n\n',
    );
    expect(formatFrame({ data: { done: true } })).toBe('data: {"done":true}\n\n');
  });

  it('sends the spec headers and heartbeats during silence', async () => {
    const res = await open('/sse/quiet');
    expect(res.headers).toMatchObject({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    let text = '';
    res.on('data', (c: Buffer) => (text += c));
    await expect.poll(() => text.split('event: heartbeat\ndata: {}\n\n').length - 1).toBeGreaterThanOrEqual(2);
    res.destroy();
  });

  it('a client that goes away closes the stream and stops its heartbeat', async () => {
    await expect.poll(() => opened.every((s) => s.closed)).toBe(true);
    const before = svc.service.ctx.streams.size;
    const res = await open('/sse/quiet');
    const stream = opened.at(-1)!;
    expect(svc.service.ctx.streams.size).toBe(before + 1);
    res.destroy();
    await expect.poll(() => stream.closed).toBe(true);
    await expect.poll(() => svc.service.ctx.streams.size).toBe(before);
    expect(await stream.send({ event: 'text-delta', data: { text: 'late' } })).toBe(false);
  });

  it('a reader that does not read gets cut off at the buffer cap', async () => {
    const res = await open('/sse/flood');
    res.pause();
    const stream = opened.at(-1)!;
    await expect.poll(() => stream.closed).toBe(true);
    res.destroy();
    // The senders waiting for the buffer to drain share one wait, not a listener each.
    expect(floodDrainListeners).toBe(1);
  });
});

import { Router } from 'express';
import type { Core } from '../core.js';
import type { SseRegistry } from '../http/sse.js';
import type { EventHub } from './hub.js';

/** What the event route reads beyond Core: the SSE registry and the event hub. */
export type EventsDeps = Core & { readonly streams: SseRegistry; readonly events: EventHub };

/**
 * GET /api/events: the service's event channel (see hub.ts and docs/events.md), behind the
 * same trust guard and with the same SSE headers as the chat stream.
 */
export function eventRoutes(ctx: EventsDeps): Router {
  const router = Router();
  router.get('/api/events', (req, res) => {
    const raw = req.get('last-event-id')?.trim();
    const lastEventId = raw !== undefined && /^\d{1,16}$/.test(raw) ? Number(raw) : undefined;
    // A client that stops reading is cut early (it reconnects with Last-Event-ID, or gets `reset`).
    const stream = ctx.streams.start(res, { heartbeatMs: ctx.config.events.heartbeatMs, maxBufferedBytes: 256 * 1024 });
    ctx.events.subscribe(stream, lastEventId);
  });
  return router;
}

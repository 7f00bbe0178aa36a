import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

/**
 * A real SSE client for tests: opens a stream over HTTP, parses frames as they arrive, and
 * lets a test wait for the frame it expects.
 */
export interface SseEvent {
  id?: string;
  event?: string;
  data: any;
}

export interface SseConnection {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every frame so far, heartbeats included. */
  events: SseEvent[];
  /** The raw text so far. */
  text(): string;
  /** Frames other than heartbeats. */
  named(): SseEvent[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  isEnded(): boolean;
  /** The first frame (from the start) matching `match`, waiting for it if need be. */
  waitFor(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Calls `listener` with each frame as it is parsed (benchmarks time arrivals with it). */
  onEvent(listener: (e: SseEvent) => void): void;
  /** Drops the connection (a client going away). */
  close(): void;
}

export function openSse(port: number, target: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: target, method: 'GET', headers: { host: `127.0.0.1:${port}`, accept: 'text/event-stream', ...headers } }, (res) => resolve(connection(res)));
    req.on('error', reject);
    req.end();
  });
}

function connection(res: IncomingMessage): SseConnection {
  const events: SseEvent[] = [];
  let raw = '';
  let pending = '';
  let done = false;
  const listeners = new Set<() => void>();
  const eventListeners: Array<(e: SseEvent) => void> = [];
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    raw += chunk;
    pending += chunk;
    let cut: number;
    while ((cut = pending.indexOf('\n\n')) !== -1) {
      const event = parseFrame(pending.slice(0, cut));
      events.push(event);
      for (const l of eventListeners) l(event);
      pending = pending.slice(cut + 2);
    }
    for (const l of listeners) l();
  });
  const ended = new Promise<void>((resolve) => {
    const finish = (): void => {
      done = true;
      resolve();
      for (const l of listeners) l();
    };
    res.on('end', finish);
    res.on('close', finish);
    res.on('error', finish);
  });
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    events,
    text: () => raw,
    named: () => events.filter((e) => e.event !== 'heartbeat'),
    ended,
    isEnded: () => done,
    waitFor: (match, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const found = events.find(match);
          if (found) {
            cleanup();
            resolve(found);
          } else if (done) {
            cleanup();
            reject(new Error(`stream ended without the expected event; got ${JSON.stringify(events)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for an event; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      }),
    onEvent: (listener) => void eventListeners.push(listener),
    close: () => res.destroy(),
  };
}

function parseFrame(block: string): SseEvent {
  const frame: SseEvent = { data: undefined };
  const data: string[] = [];
  for (const line of block.split('\n')) {
    const at = line.indexOf(':');
    const field = at === -1 ? line : line.slice(0, at);
    const value = at === -1 ? '' : line.slice(at + 1).replace(/^ /, '');
    if (field === 'id') frame.id = value;
    else if (field === 'event') frame.event = value;
    else if (field === 'data') data.push(value);
  }
  frame.data = data.length ? JSON.parse(data.join('\n')) : undefined;
  return frame;
}

import type { SseFrame, SseStream } from '../http/sse.js';
import type { TurnFrame, TurnRun } from './turn-run.js';

/**
 * Writing a turn's frames to one SSE response. `follow` sends what the client has not seen
 * (everything, on a first open; what comes after Last-Event-ID, on a reopen) and then
 * follows live until the terminal frame, when the stream is closed. `reconnect` is the
 * spec's reconnect mode: wait for the turn to end, then `session-created` and the end.
 */
export type FrameShape = (frame: TurnFrame) => SseFrame | undefined;

/** The named, numbered frames of /api/chat/stream. */
export const namedFrame: FrameShape = (f) => ({ id: f.id, event: f.event, data: f.data });

export async function follow(stream: SseStream, run: TurnRun, after: number, shape: FrameShape, onGap: () => Promise<void>): Promise<void> {
  for await (const frame of framesOf(run, after, closedSignal(stream))) {
    // The client fell behind what is kept: it cannot have every delta, so it gets the end.
    if (frame === 'gap') return onGap();
    const out = shape(frame);
    if (out && !(await stream.send(out))) return;
  }
  stream.close();
}

/** The turn's frames after `after`, live, through the terminal one; 'gap' if some are gone. */
export async function* framesOf(run: TurnRun, after: number, stop: Promise<void>): AsyncGenerator<TurnFrame | 'gap'> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  let cursor = after;
  while (!stopped) {
    const next = run.after(cursor);
    if (next === 'gap') {
      yield 'gap';
      return;
    }
    for (const frame of next) {
      yield frame;
      cursor = frame.id;
    }
    if (run.terminal && cursor >= run.terminal.id) return;
    if (next.length === 0) await Promise.race([run.changed(), stop]);
  }
}

export async function reconnect(stream: SseStream, run: TurnRun, waitMs: number): Promise<void> {
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      resolve();
    }, waitMs);
  });
  const gone = closedSignal(stream);
  while (!run.terminal && !stream.closed && !timedOut) await Promise.race([run.changed(), waited, gone]);
  clearTimeout(timer);
  if (stream.closed) return;
  let id = run.lastId;
  await stream.send({ id: ++id, event: 'session-created', data: { session_id: run.sessionId } });
  const end = run.terminal;
  if (end?.event === 'agent-error') await stream.send({ id: ++id, event: 'agent-error', data: end.data });
  else await stream.send({ id: ++id, event: 'done', data: { finish_reason: end?.data.finish_reason ?? 'stop', session_id: run.sessionId } });
  stream.close();
}

function closedSignal(stream: SseStream): Promise<void> {
  return new Promise((resolve) => stream.onClose(resolve));
}

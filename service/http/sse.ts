import type { Response } from 'express';

/**
 * One Server-Sent Events response. Every frame goes through `send`, which serializes
 * `data` as JSON (so text cannot forge fields or events), waits for `drain` when the
 * socket is saturated, and writes a heartbeat whenever the stream has been silent.
 */
export interface SseOptions {
  /** Silence after which an `event: heartbeat` frame is sent; 0 disables heartbeats. */
  heartbeatMs: number;
  /** Bytes buffered for a slow reader beyond which the stream is cut. */
  maxBufferedBytes?: number;
  /** Legacy streams carry no event names and no heartbeats. */
  named?: boolean;
}

export interface SseFrame {
  event?: string;
  data: unknown;
  id?: number;
}

const DEFAULT_MAX_BUFFERED = 4 * 1024 * 1024;

export class SseStream {
  private heartbeat: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private readonly closeListeners: Array<() => void> = [];
  private ended = false;

  constructor(
    private readonly res: Response,
    private readonly options: SseOptions,
  ) {
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    // `close` on the response (not the request) is what fires when the client goes away.
    res.on('close', () => this.finish());
    this.armHeartbeat();
  }

  get closed(): boolean {
    return this.ended || this.res.destroyed || this.res.writableEnded;
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** Writes one frame; resolves once the socket can take more. False if the stream is gone. */
  async send(frame: SseFrame): Promise<boolean> {
    if (this.closed) return false;
    // The cap is on what a slow reader left unread before this frame: one large frame (a
    // long text delta) to a reader that keeps up must go out whole, not cut the stream.
    if (this.res.writableLength > (this.options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED)) {
      this.close();
      return false;
    }
    const accepted = this.res.write(formatFrame(frame));
    this.armHeartbeat();
    if (!accepted) await this.drained();
    return !this.closed;
  }

  /** Ends the response cleanly (the client sees the end of the stream, not a reset). */
  close(): void {
    if (!this.res.writableEnded && !this.res.destroyed) this.res.end();
    this.finish();
  }

  /** One wait for all senders: frames sent without awaiting the previous one share it. */
  private drained(): Promise<void> {
    this.draining ??= new Promise((resolve) => {
      const done = (): void => {
        this.res.off('drain', done);
        this.res.off('close', done);
        this.draining = undefined;
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
    return this.draining;
  }

  private armHeartbeat(): void {
    if (this.options.heartbeatMs <= 0 || this.options.named === false) return;
    clearTimeout(this.heartbeat);
    this.heartbeat = setTimeout(() => {
      // Bytes still going out are not silence: a heartbeat now would only queue behind them
      // (and could trip the slow-reader cap while a large frame drains).
      if (this.res.writableLength > 0) this.armHeartbeat();
      else void this.send({ event: 'heartbeat', data: {} });
    }, this.options.heartbeatMs);
    this.heartbeat.unref();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.heartbeat);
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}

export function formatFrame(frame: SseFrame): string {
  let text = '';
  if (frame.id !== undefined) text += `id: ${frame.id}\n`;
  if (frame.event !== undefined) text += `event: ${frame.event}\n`;
  return `${text}data: ${JSON.stringify(frame.data)}\n\n`;
}

/** Every open stream, so shutdown can end them all. */
export class SseRegistry {
  private readonly open = new Set<SseStream>();

  start(res: Response, options: SseOptions): SseStream {
    const stream = new SseStream(res, options);
    this.open.add(stream);
    stream.onClose(() => this.open.delete(stream));
    return stream;
  }

  get size(): number {
    return this.open.size;
  }

  closeAll(): void {
    for (const stream of [...this.open]) stream.close();
  }
}

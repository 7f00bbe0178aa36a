import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How much of a refused request's body is still read, and for how long, after its answer
 * (nginx's lingering close: `lingering_time` 30 s, `lingering_timeout` 5 s, no byte bound).
 * Past either bound the connection is cut, so a client that sends forever costs at most this.
 */
export const LINGER_BYTES = 64 * 1024 * 1024;
export const LINGER_MS = 5000;

export interface LingerBounds {
  bytes: number;
  ms: number;
}

/**
 * Ends the connection of a request answered before its body was read, without losing the
 * answer. Closing a socket that still receives bytes makes the kernel send a reset, and a
 * client still writing its body (Node's fetch and http, curl) then sees EPIPE or ECONNRESET
 * instead of the answer it was sent. So the answer goes out with `Connection: close`, the
 * sending side is closed once it is out, and the rest of the body is read and dropped until
 * it ends (then the socket closes cleanly), or until `bounds.bytes` more came or `bounds.ms`
 * passed (then it is cut). Call before the answer is written.
 */
export function lingerAfterAnswer(req: IncomingMessage, res: ServerResponse, bounds: LingerBounds = { bytes: LINGER_BYTES, ms: LINGER_MS }): void {
  res.setHeader('Connection', 'close');
  const socket = req.socket;
  let dropped = 0;
  // Reading the body ourselves also keeps Node from dumping it unseen once the answer is out.
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > bounds.bytes) socket.destroy();
  });
  req.on('error', () => socket.destroy());
  req.resume();
  // Node ends a `Connection: close` socket once the answer is out (destroySoon): this one
  // stays open for reading until the body has ended.
  const close = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
    if (req.complete) return close();
    const timer = setTimeout(() => socket.destroy(), bounds.ms);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    req.once('end', close);
  };
}

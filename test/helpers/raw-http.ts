import { connect, type Socket } from 'node:net';

/**
 * HTTP spoken byte by byte over a plain socket, for what node's client will not send:
 * duplicated headers, absolute-form targets, stalled or endless bodies.
 */
export interface RawResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: string;
}

/** Parses the first response in `raw`, a byte (latin1) string: status line, headers, body by Content-Length as UTF-8. */
export function parseResponse(raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`no complete response head in ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const length = Number(headers['content-length'] ?? raw.length);
  const body = Buffer.from(raw.slice(end + 4, end + 4 + length), 'latin1').toString('utf8');
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

/** Sends `data` and reads until the server closes the connection (send `Connection: close`). */
export function rawRequest(port: number, data: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got ${JSON.stringify(raw.slice(0, 200))}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => (raw += chunk.toString('latin1')));
    socket.on('error', () => undefined); // a reset after the answer is fine; the parse decides
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(raw));
      } catch (err) {
        reject(err);
      }
    });
    socket.write(data);
  });
}

/** An open connection whose bytes arrive in `received`; `closed` resolves when the server ends it. */
export interface RawConnection {
  socket: Socket;
  received(): string;
  closed: Promise<void>;
}

export function rawConnection(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    socket.on('data', (chunk: Buffer) => (raw += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('connect', () => resolve({ socket, received: () => raw, closed }));
    socket.once('error', reject);
  });
}

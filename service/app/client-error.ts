import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Node's own answers to a request its parser refuses (malformed head, headers too large,
 * header timeout) are bare; this one gives them the same `{detail}` body and hardening
 * headers as every other answer, then closes the connection as Node would.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code !== 'ECONNRESET' && socket.writable && !responseStarted(socket)) {
    const status = statusOf(err.code);
    const body = JSON.stringify({ detail: STATUS_CODES[status] ?? 'Bad Request' });
    socket.write(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
        'Connection: close',
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'X-Content-Type-Options: nosniff',
        'Cache-Control: no-store',
        '',
        body,
      ].join('\r\n'),
    );
  }
  socket.destroy();
}

function statusOf(code: string | undefined): number {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

/** Node keeps the response being written on the socket; its head may already be out. */
function responseStarted(socket: Duplex): boolean {
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return current?.headersSent === true;
}

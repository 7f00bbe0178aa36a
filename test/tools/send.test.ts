import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../helpers/service.js';

/**
 * The HTTP helper every test and bench uses keeps sockets alive. When this process is busy
 * past the server's keep-alive timeout (a bench's blocking loop), the server closes the idle
 * socket before this side notices, and the next request on it fails: a GET is sent again.
 */
let server: ChildProcess;
let port: number;

beforeAll(async () => {
  // Keeps each connection open as kept-alive, then drops it 50 ms after answering: what a
  // server's keep-alive timeout does to a client that stays busy past it.
  const code = `const s = require('node:http').createServer((q, r) => { q.resume(); r.end(q.method, () => setTimeout(() => q.socket.destroy(), 50)); });
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  server = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(server.stdout!, 'data')) as [Buffer];
  port = Number(chunk.toString().trim());
});

afterAll(() => {
  server.kill();
});

/** Blocks this thread: the server drops the socket meanwhile, and this side cannot see it. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

describe('send() over a kept-alive socket the server has closed', () => {
  it('a GET is sent again on a new socket', async () => {
    expect((await send(port, 'GET', '/')).text).toBe('GET');
    busy(300);
    expect((await send(port, 'GET', '/')).text).toBe('GET');
  });

  it('a POST is not sent twice: its error is the caller\'s', async () => {
    expect((await send(port, 'POST', '/', { body: {} })).text).toBe('POST');
    busy(300);
    await expect(send(port, 'POST', '/', { body: {} })).rejects.toMatchObject({ code: 'ECONNRESET' });
  });
});

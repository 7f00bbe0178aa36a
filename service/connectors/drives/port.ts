import { createServer } from 'node:net';

/**
 * Whether nothing listens on 127.0.0.1:port, found by binding it for an instant. Never an
 * HTTP probe: a request to rclone's listener without the right code makes rclone exit.
 */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

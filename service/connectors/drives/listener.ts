import { request } from 'node:http';

/**
 * One GET to rclone's OAuth listener on a fresh connection. Every flow starts a new rclone
 * on the same port, so a kept-alive socket from the previous one (fetch pools them) would
 * be dead; `agent: false` never reuses one. Answers the status and the Location header.
 */
export function getOnce(url: string, timeoutMs: number): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer in time')));
    req.on('error', reject);
    req.end();
  });
}

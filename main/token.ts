import { randomBytes } from 'node:crypto';
import type { Session } from 'electron';

/** A fresh secret per launch; it never leaves the main process except as a request header. */
export function newLaunchToken(): string {
  return randomBytes(32).toString('hex');
}

/**
 * Adds the launch token to the app's own requests to the service, so the renderer can use
 * plain fetch and EventSource while the token stays out of its reach.
 */
export function injectToken(session: Pick<Session, 'webRequest'>, serviceOrigin: string, token: string): void {
  session.webRequest.onBeforeSendHeaders({ urls: [`${serviceOrigin}/*`] }, (details, callback) => {
    callback({ requestHeaders: { ...details.requestHeaders, 'X-Space-Token': token } });
  });
}

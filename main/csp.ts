import type { Session } from 'electron';

/**
 * The renderer's Content-Security-Policy when its pages bring none: scripts and styles from
 * its own origin only, requests to its origin and the loopback service only, no plugins, no
 * framing. The service's diagnostics page sends a stricter one of its own.
 */
export const RENDERER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self' http://127.0.0.1:* http://localhost:*",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Adds RENDERER_CSP to responses from the renderer's origin that carry no policy of their own. */
export function enforceCsp(session: Pick<Session, 'webRequest'>, origin: string, csp: string = RENDERER_CSP): void {
  session.webRequest.onHeadersReceived({ urls: [`${origin}/*`] }, (details, callback) => {
    const headers = details.responseHeaders ?? {};
    const hasPolicy = Object.keys(headers).some((name) => name.toLowerCase() === 'content-security-policy');
    callback({ responseHeaders: hasPolicy ? headers : { ...headers, 'Content-Security-Policy': [csp] } });
  });
}

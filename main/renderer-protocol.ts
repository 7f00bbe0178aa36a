import { readFile } from 'node:fs/promises';
import path from 'node:path';
import mime from 'mime-types';
import { RENDERER_CSP as CSP } from './csp.js';

export const APP_SCHEME = 'app';
export const APP_ORIGIN = `${APP_SCHEME}://space`;

/**
 * Serves a renderer bundle under app://space (SPACE_RENDERER_URL=app://space/index.html),
 * so the UI has a real origin the service can allow-list (file:// would send `Origin: null`).
 * Paths stay inside the bundle folder.
 */
export async function serveRenderer(request: { url: string }, rendererDir: string): Promise<Response> {
  const url = new URL(request.url);
  if (`${url.protocol}//${url.host}` !== APP_ORIGIN) return new Response('Not Found', { status: 404 });
  const relative = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
  const file = path.resolve(rendererDir, `.${relative}`);
  if (!file.startsWith(rendererDir + path.sep)) return new Response('Not Found', { status: 404 });
  try {
    const body = await readFile(file);
    return new Response(body, { headers: { 'Content-Type': mime.lookup(file) || 'application/octet-stream', 'Content-Security-Policy': CSP } });
  } catch {
    if (relative === '/index.html') return placeholder();
    return new Response('Not Found', { status: 404 });
  }
}

/** Shown when no renderer bundle is installed next to the app. */
function placeholder(): Response {
  const html = '<!doctype html><meta charset="utf-8"><title>Space</title><h1>Space</h1><p>The service is running; no renderer bundle is installed.</p>';
  return new Response(html, { headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': CSP } });
}

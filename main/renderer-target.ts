import { safeOrigin } from '../service/config.js';

/** What the window shows, and the origin its pages (and IPC senders) must have. */
export interface RendererTarget {
  url: string;
  origin: string;
}

/**
 * SPACE_RENDERER_URL when set (the desktop frontend: a loopback dev server or the bundle
 * under app://space), else the service's own diagnostics page.
 */
export function rendererTarget(rendererUrl: string | undefined, serviceUrl: string): RendererTarget {
  const url = rendererUrl ?? `${serviceUrl}/diagnostics`;
  const origin = safeOrigin(url);
  if (!origin) throw new Error(`The window cannot load ${url}: it has no origin`);
  return { url, origin };
}

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { HttpError } from '../errors.js';

/**
 * The diagnostics page's files (web/diagnostics/): fixed names only, read once, kept in
 * memory. A page that only ever loads these three and talks to its own origin.
 */
export const PAGE_FILES = {
  '/diagnostics': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/diagnostics/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/diagnostics/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
} as const;

export type PagePath = keyof typeof PAGE_FILES;

/** No inline script or style, no framing, no request but to its own origin, no forms posting anywhere. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export class PageAssets {
  private readonly cache = new Map<PagePath, Promise<Buffer>>();

  constructor(private readonly dir: string) {}

  async read(pagePath: PagePath): Promise<{ body: Buffer; type: string }> {
    const { file, type } = PAGE_FILES[pagePath];
    let body = this.cache.get(pagePath);
    if (!body) {
      body = readFile(path.join(this.dir, file));
      this.cache.set(pagePath, body);
      // A failed read is not kept: the next request tries again.
      body.catch(() => this.cache.delete(pagePath));
    }
    try {
      return { body: await body, type };
    } catch {
      throw new HttpError(500, `The diagnostics page file ${file} is missing from ${this.dir}`);
    }
  }
}

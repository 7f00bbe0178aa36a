import path from 'node:path';
import { JsonFile } from '../stores/json-file.js';

/**
 * Where each fork came from (`forked_from` on its session's list entry): one small JSON
 * document, read once and kept in memory; written atomically, one writer at a time.
 */
export interface ForkedFrom {
  session_id: string;
  message_id: string | null;
}

export class ForkBook {
  private readonly file: JsonFile<Record<string, ForkedFrom>>;
  private loaded: Promise<Record<string, ForkedFrom>>;

  constructor(dir: string) {
    this.file = new JsonFile(path.join(dir, 'forks.json'), () => ({}), { mode: 0o600, dirMode: 0o700 });
    // Read at start, beside the session index's build: read when the first listing asked for
    // it, the listing waited for that read while the start's background passes (a SQLite
    // store's count, 45 ms) took the thread: 80 ms of a restart's first page (docs/startup.md).
    this.loaded = this.file.read().catch(() => ({}));
  }

  async forkedFrom(sessionId: string): Promise<ForkedFrom | undefined> {
    return Object.hasOwn(await this.loaded, sessionId) ? (await this.loaded)[sessionId] : undefined;
  }

  async put(sessionId: string, from: ForkedFrom): Promise<void> {
    const all = await this.file.update((current) => {
      const next = { ...current, [sessionId]: from };
      return { next, result: next };
    });
    this.loaded = Promise.resolve(all);
  }
}

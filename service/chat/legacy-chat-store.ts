import path from 'node:path';
import type { Config } from '../config.js';
import { JsonFile } from '../stores/json-file.js';

/**
 * The legacy chat's session store: which session a `project_name` (a session key, not a
 * path) continues. Kept in ~/.space-state/legacy-sessions.json, an object keyed by
 * project_id (= project_name), so a restart keeps legacy conversations going.
 */
export interface LegacyChatEntry {
  project_id: string;
  session_id: string;
  agent_name: string;
  user_id: string;
  message_type: string;
  /** ISO 8601. */
  created_at: string;
  updated_at: string;
}

export type LegacyChatIndex = Record<string, LegacyChatEntry>;

export class LegacyChatStore {
  private readonly file: JsonFile<LegacyChatIndex>;

  constructor(config: Config) {
    this.file = new JsonFile<LegacyChatIndex>(path.join(path.dirname(config.paths.stateFile), 'legacy-sessions.json'), () => ({}), { dirMode: 0o700 });
  }

  async all(): Promise<LegacyChatIndex> {
    const index = await this.file.read();
    return index && typeof index === 'object' && !Array.isArray(index) ? index : {};
  }

  async get(projectId: string): Promise<LegacyChatEntry | undefined> {
    const index = await this.all();
    return Object.hasOwn(index, projectId) ? index[projectId] : undefined;
  }

  async put(entry: Omit<LegacyChatEntry, 'created_at' | 'updated_at'>): Promise<void> {
    const now = new Date().toISOString();
    await this.file.update((current) => {
      const index: LegacyChatIndex = current && typeof current === 'object' && !Array.isArray(current) ? { ...current } : {};
      const previous = Object.hasOwn(index, entry.project_id) ? index[entry.project_id] : undefined;
      const created = previous?.session_id === entry.session_id ? previous.created_at : now;
      // fromEntries, not assignment: a project_name of `__proto__` stays a plain key.
      const next = Object.fromEntries([...Object.entries(index), [entry.project_id, { ...entry, created_at: created, updated_at: now }]]) as LegacyChatIndex;
      return { next, result: undefined };
    });
  }

  /** True when there was an entry to drop. */
  async remove(projectId: string): Promise<boolean> {
    return this.file.update((current) => {
      const index: LegacyChatIndex = current && typeof current === 'object' && !Array.isArray(current) ? { ...current } : {};
      if (!Object.hasOwn(index, projectId)) return { next: index, result: false };
      delete index[projectId];
      return { next: index, result: true };
    });
  }
}

import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { SAFE_ID } from '../../ids.js';
import { currentSessions, INDEX_FILE, indexEntries, runtimeaDatabase, runtimeaSessionsDir, storeTranscript, withStore, type Database } from '../../transcripts/runtimea-store.js';

/**
 * The gateway's session store, read-only. Two layouts, by OpenClaw version:
 *   <= 2026.7.1  files: agents/<agent>/sessions/sessions.json ({sessionKey: SessionEntry})
 *                + <sessionId>.jsonl transcripts
 *   >= 2026.7.2  SQLite: agents/<agent>/agent/openclaw-agent.sqlite (session_nodes,
 *                transcript_events); the sessions/ folder exists but stays empty
 * An agent with a sessions.json is read as the file store (2026.9.6 refuses to start with one
 * present until `openclaw doctor --fix` imports it). The service never writes either layout,
 * and never creates a sessions.json. SQLite is read through the one reader of that store
 * (transcripts/runtimea-store.ts), which the sessions pipeline uses too: opened read-only for
 * each lookup and closed at once, compressed rows decoded where this Node can.
 */
export interface SessionRow {
  agent: string;
  sessionKey: string;
  sessionId: string;
  updatedAt: number;
}

export type StoreLayout = 'file' | 'sqlite' | 'none';

export class GatewaySessionStore {
  constructor(readonly stateDir: string) {}

  layout(agent: string): StoreLayout {
    if (existsSync(this.sessionsJson(agent))) return 'file';
    if (existsSync(this.database(agent))) return 'sqlite';
    return 'none';
  }

  async agents(): Promise<string[]> {
    try {
      const dirents = await readdir(path.join(this.stateDir, 'agents'), { withFileTypes: true });
      return dirents.filter((d) => d.isDirectory() && SAFE_ID.test(d.name)).map((d) => d.name);
    } catch {
      return [];
    }
  }

  /** The row of one session key (e.g. `agent:main:space-<uuid>`), if the gateway wrote it. */
  async byKey(agent: string, sessionKey: string): Promise<SessionRow | undefined> {
    return (await this.rows(agent)).find((r) => r.sessionKey === sessionKey);
  }

  /** Which agent and key hold a session id, across every agent. */
  async bySessionId(sessionId: string): Promise<SessionRow | undefined> {
    for (const agent of await this.agents()) {
      const row = (await this.rows(agent)).find((r) => r.sessionId === sessionId);
      if (row) return row;
    }
    return undefined;
  }

  /** Every row of one agent; none when the agent has no store (or it cannot be read). */
  async rows(agent: string): Promise<SessionRow[]> {
    if (!SAFE_ID.test(agent)) return [];
    const layout = this.layout(agent);
    if (layout === 'file') return this.fileRows(agent);
    if (layout === 'sqlite') return this.sqliteRows(agent);
    return [];
  }

  /** The session's transcript as JSONL (one record per line), or undefined if there is none yet. */
  async transcript(agent: string, sessionId: string): Promise<string | undefined> {
    if (!SAFE_ID.test(agent) || !SAFE_ID.test(sessionId)) return undefined;
    if (this.layout(agent) === 'file') {
      try {
        return await readFile(path.join(this.sessionsDir(agent), `${sessionId}.jsonl`), 'utf8');
      } catch {
        return undefined;
      }
    }
    return this.withDatabase(agent, (db) => storeTranscript(db, sessionId));
  }

  private async fileRows(agent: string): Promise<SessionRow[]> {
    let index: unknown;
    try {
      index = JSON.parse(await readFile(this.sessionsJson(agent), 'utf8'));
    } catch {
      return [];
    }
    return indexEntries(index).map(([sessionKey, e]) => ({ agent, sessionKey, sessionId: e.sessionId as string, updatedAt: Number(e.updatedAt) || 0 }));
  }

  private sqliteRows(agent: string): SessionRow[] {
    return (this.withDatabase(agent, currentSessions) ?? []).map((r) => ({ agent, sessionKey: r.sessionKey, sessionId: r.sessionId, updatedAt: r.updatedAtMs }));
  }

  /** Opens the agent's database read-only for one read; undefined when it cannot be read. */
  private withDatabase<T>(agent: string, read: (db: Database) => T): T | undefined {
    try {
      return withStore(this.database(agent), read);
    } catch {
      return undefined;
    }
  }

  private sessionsDir(agent: string): string {
    return runtimeaSessionsDir(this.stateDir, agent);
  }

  private sessionsJson(agent: string): string {
    return path.join(this.sessionsDir(agent), INDEX_FILE);
  }

  private database(agent: string): string {
    return runtimeaDatabase(this.stateDir, agent);
  }
}

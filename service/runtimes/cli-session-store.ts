import { appendFile, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { SAFE_ID } from '../ids.js';
import { withFileLock } from '../stores/atomic.js';
import { JsonFile } from '../stores/json-file.js';
import type { AgentName } from './runtime.js';

/**
 * The service's own store for a CLI runtime's sessions (clia: ~/clia-space, clib:
 * ~/clib-space), one folder per agent (project) id:
 *
 *   <root>/<agent_id>/sessions/sessions.json      index: object keyed by session id
 *                                                 (readers also accept an array of entries)
 *   <root>/<agent_id>/sessions/<session_id>.jsonl transcript, appended as a turn runs
 *
 * The session id is the service's own; `nativeSessionId` is the CLI's (they differ once a
 * resume had to fall back to a fresh native session). Index writes are atomic and queued
 * per file with every other writer of that file (the sessions PATCH included).
 */
export interface DirectoryChoice {
  directory: string;
  selectedAt: number;
}

export interface CliSessionEntry {
  sessionId: string;
  nativeSessionId?: string;
  /** Epoch ms. */
  updatedAt: number;
  directory: string;
  directoryHistory: DirectoryChoice[];
  title: string;
  [field: string]: unknown;
}

export type CliSessionIndex = Record<string, CliSessionEntry> | CliSessionEntry[];

export interface FoundSession {
  agentId: string;
  entry: CliSessionEntry;
}

export class CliSessionStore {
  constructor(
    /** ~/clia-space or ~/clib-space */
    readonly root: string,
    readonly agentName: AgentName,
  ) {}

  indexFile(agentId: string): string {
    return path.join(this.folder(agentId), 'sessions.json');
  }

  transcriptFile(agentId: string, sessionId: string): string {
    if (!SAFE_ID.test(sessionId)) throw new Error(`unsafe session id: ${sessionId}`);
    return path.join(this.folder(agentId), `${sessionId}.jsonl`);
  }

  /**
   * The agent id and index entry of a session, scanning every agent folder. An index that
   * does not parse is skipped here (one broken project must not hide every other one);
   * writing to it still fails loudly.
   */
  async find(sessionId: string): Promise<FoundSession | undefined> {
    for (const agentId of await this.agentIds()) {
      const index = await this.index(agentId).read().catch(() => undefined);
      const entry = entriesOf(index).find((e) => e.sessionId === sessionId);
      if (entry) return { agentId, entry };
    }
    return undefined;
  }

  /**
   * Creates or merges one entry (own keys only), keeping the file's form (object or array).
   * A file that does not parse is left untouched and the write fails.
   */
  async upsert(agentId: string, sessionId: string, fields: Partial<CliSessionEntry>): Promise<CliSessionEntry> {
    return this.index(agentId).update((current) => {
      const existing = entriesOf(current).find((e) => e.sessionId === sessionId);
      const merged: CliSessionEntry = {
        directory: '',
        directoryHistory: [],
        title: '',
        updatedAt: Date.now(),
        ...(existing ?? {}),
        ...ownFields(fields),
        sessionId,
      };
      return { next: withEntry(current, merged), result: merged };
    });
  }

  /** Appends whole lines to a session's transcript, one writer per file at a time. */
  async append(agentId: string, sessionId: string, lines: readonly string[]): Promise<void> {
    const file = this.transcriptFile(agentId, sessionId);
    return withFileLock(file, async () => {
      await mkdir(path.dirname(file), { recursive: true });
      await appendFile(file, lines.map((l) => `${l}\n`).join(''));
    });
  }

  private folder(agentId: string): string {
    if (!SAFE_ID.test(agentId) || agentId === '.' || agentId === '..') throw new Error(`unsafe agent id: ${agentId}`);
    return path.join(this.root, agentId, 'sessions');
  }

  private index(agentId: string): JsonFile<CliSessionIndex> {
    return new JsonFile<CliSessionIndex>(this.indexFile(agentId), () => ({}));
  }

  private async agentIds(): Promise<string[]> {
    try {
      const dirents = await readdir(this.root, { withFileTypes: true });
      return dirents.filter((d) => d.isDirectory() && SAFE_ID.test(d.name) && d.name !== '..' && d.name !== '.').map((d) => d.name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}

/** Every entry of an index in either form; malformed entries are skipped. */
export function entriesOf(index: unknown): CliSessionEntry[] {
  const values = Array.isArray(index) ? index : index && typeof index === 'object' ? Object.values(index) : [];
  return values.filter((e): e is CliSessionEntry => !!e && typeof e === 'object' && typeof (e as CliSessionEntry).sessionId === 'string');
}

function withEntry(index: CliSessionIndex, entry: CliSessionEntry): CliSessionIndex {
  if (Array.isArray(index)) {
    const at = index.findIndex((e) => e?.sessionId === entry.sessionId);
    return at === -1 ? [...index, entry] : index.map((e, i) => (i === at ? entry : e));
  }
  const next: Record<string, CliSessionEntry> = Object.create(null) as Record<string, CliSessionEntry>;
  for (const [k, v] of Object.entries(index ?? {})) next[k] = v;
  next[entry.sessionId] = entry;
  return { ...next };
}

function ownFields(fields: Partial<CliSessionEntry>): Partial<CliSessionEntry> {
  const out: Partial<CliSessionEntry> = {};
  for (const key of Object.keys(fields)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    const value = fields[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

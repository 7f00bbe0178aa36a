import Database from 'better-sqlite3';
import type { AgentName } from '../runtimes/runtime.js';
import { MARK_END, MARK_START, type DocKind } from './documents.js';

/**
 * Searches on the main thread's own connection (read-only use; WAL lets it read while the
 * worker writes). The work per query is bounded: the hits are ranked among the newest
 * MAX_CANDIDATES matching documents (the highest ids, see schema.ts), so a word that occurs
 * in every message costs about the same as a rare one. Two passes: the candidates with
 * their rank, then the page's snippets.
 */
export const MAX_CANDIDATES = 5_000;
const SNIPPET_TOKENS = 24;

export interface HitRow {
  id: number;
  score: number;
  snippet: string;
  messageIndex: number;
  messageId: string;
  role: string;
  kind: DocKind;
  toolName: string | null;
  timestamp: string;
  sessionId: string;
  agentName: AgentName;
  agentId: string;
}

export interface SearchRows {
  /** Matches that can be paged through (at most MAX_CANDIDATES). */
  total: number;
  /** More documents match than `total`: only the newest MAX_CANDIDATES were ranked. */
  capped: boolean;
  rows: HitRow[];
}

export class FtsReader {
  private readonly db: Database.Database;
  private readonly statements;

  constructor(file: string) {
    this.db = new Database(file, { fileMustExist: true, timeout: 2000 });
    this.db.pragma('query_only = ON');
    this.statements = {
      // One pass over the newest matches, ranking each (rank = bm25, lower is better).
      candidates: this.db.prepare('SELECT rowid, rank FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?').raw(),
      // The page's snippets: one lookup per hit, or, when the query has a prefix longer than
      // the prefix indexes (whose doclist FTS5 would build again for each lookup), one pass
      // over the page's id range (`+rowid` keeps the id list out of FTS5's hands).
      snippet: this.db.prepare(`SELECT snippet(fts, 0, char(57344), char(57345), '…', ${SNIPPET_TOKENS}) FROM fts WHERE rowid = ? AND fts MATCH ?`).pluck(),
      snippets: this.db
        .prepare(
          `SELECT rowid, snippet(fts, 0, char(57344), char(57345), '…', ${SNIPPET_TOKENS}) FROM fts
            WHERE fts MATCH ? AND rowid BETWEEN ? AND ? AND +rowid IN (SELECT value FROM json_each(?))`,
        )
        .raw(),
      fields: this.db.prepare(
        `SELECT d.message_index AS messageIndex, d.message_id AS messageId, d.role, d.kind, d.tool_name AS toolName, d.timestamp,
                s.session_id AS sessionId, s.agent_name AS agentName, s.agent_id AS agentId
           FROM docs d JOIN sessions s ON s.sid = d.sid WHERE d.id = ?`,
      ),
    };
  }

  /** `match` is a complete FTS5 expression; throws SqliteError on a bad one. */
  search(match: string, limit: number, offset: number, longPrefix: boolean): SearchRows {
    const found = this.statements.candidates.all(match, MAX_CANDIDATES + 1) as Array<[number, number]>;
    const capped = found.length > MAX_CANDIDATES;
    const candidates = capped ? found.slice(0, MAX_CANDIDATES) : found;
    // Best first; ties newer first.
    candidates.sort((a, b) => a[1] - b[1] || b[0] - a[0]);
    const page = candidates.slice(offset, offset + limit);
    if (page.length === 0) return { total: candidates.length, capped, rows: [] };
    const ids = page.map(([id]) => id);
    const snippets = longPrefix
      ? new Map(this.statements.snippets.all(match, Math.min(...ids), Math.max(...ids), JSON.stringify(ids)) as Array<[number, string]>)
      : new Map(ids.map((id) => [id, this.statements.snippet.get(id, match) as string | undefined]));
    const rows = page.flatMap(([id, rank]): HitRow[] => {
      const fields = this.statements.fields.get(id) as Omit<HitRow, 'id' | 'score' | 'snippet'> | undefined;
      return fields ? [{ id, score: -rank, snippet: markSnippet(snippets.get(id) ?? ''), ...fields }] : [];
    });
    return { total: candidates.length, capped, rows };
  }

  close(): void {
    this.db.close();
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** An HTML fragment: the text escaped, each match in <mark>…</mark>. */
export function markSnippet(raw: string): string {
  return raw
    .replace(/[&<>"']/g, (c) => ESCAPES[c]!)
    .replaceAll(MARK_START, '<mark>')
    .replaceAll(MARK_END, '</mark>');
}

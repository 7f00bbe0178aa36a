import Database from 'better-sqlite3';
import type { AgentName } from '../runtimes/runtime.js';
import { MARK_END, MARK_START, type DocKind } from './documents.js';

/**
 * Searches on the main thread's own connection (read-only use; WAL lets it read while the
 * worker writes). The work per query is bounded: the hits are ranked among the newest
 * MAX_CANDIDATES matching documents (the lowest ids, see schema.ts), so a word that occurs
 * in every message costs about the same as a rare one.
 */
export const MAX_CANDIDATES = 10_000;
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
      window: this.db.prepare('SELECT count(*) AS n, max(rowid) AS edge FROM (SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid LIMIT ?)'),
      older: this.db.prepare('SELECT 1 FROM fts WHERE fts MATCH ? AND rowid > ? LIMIT 1'),
      // Ranked (ties: newer first) on rowid and rank alone; snippets only for the page's rows.
      page: this.db.prepare(
        `SELECT h.rowid AS id, h.score, snippet(fts, 0, char(57344), char(57345), '…', ${SNIPPET_TOKENS}) AS snippet,
                d.message_index AS messageIndex, d.message_id AS messageId, d.role, d.kind, d.tool_name AS toolName, d.timestamp,
                s.session_id AS sessionId, s.agent_name AS agentName, s.agent_id AS agentId
           FROM (SELECT rowid, -rank AS score FROM fts WHERE fts MATCH @match AND rowid <= @edge ORDER BY rank, rowid LIMIT @limit OFFSET @offset) AS h
           JOIN fts ON fts.rowid = h.rowid AND fts MATCH @match
           JOIN docs d ON d.id = h.rowid
           JOIN sessions s ON s.sid = d.sid
          ORDER BY h.score DESC, h.rowid`,
      ),
    };
  }

  /** `match` is a complete FTS5 expression; throws SqliteError on a bad one. */
  search(match: string, limit: number, offset: number): SearchRows {
    const { n, edge } = this.statements.window.get(match, MAX_CANDIDATES) as { n: number; edge: number | null };
    if (n === 0 || edge === null) return { total: 0, capped: false, rows: [] };
    const capped = n === MAX_CANDIDATES && this.statements.older.get(match, edge) !== undefined;
    const rows = offset >= n || limit === 0 ? [] : (this.statements.page.all({ match, edge, limit, offset }) as HitRow[]);
    return { total: n, capped, rows: rows.map((r) => ({ ...r, snippet: markSnippet(r.snippet) })) };
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

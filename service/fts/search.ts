import Database from 'better-sqlite3';
import type { AgentName } from '../runtimes/runtime.js';
import { MARK_END, MARK_START, type DocKind } from './documents.js';

/**
 * Searches on the main thread's own connection (read-only use; WAL lets it read while the
 * worker writes). The work per query is bounded: the hits are ranked among the newest
 * MAX_CANDIDATES matching documents (the highest ids, see schema.ts), so a word that occurs
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
      window: this.db.prepare('SELECT count(*) AS n, min(rowid) AS edge FROM (SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?)'),
      older: this.db.prepare('SELECT 1 FROM fts WHERE fts MATCH ? AND rowid < ? LIMIT 1'),
      // `rank, rowid` rather than `rank` alone: FTS5's own rank sorter would score every
      // match, ignoring the rowid range. Ties: newer first.
      ranked: this.db.prepare('SELECT rowid AS id, -rank AS score FROM fts WHERE fts MATCH ? AND rowid >= ? ORDER BY rank, rowid DESC LIMIT ? OFFSET ?'),
      // Snippets and fields for the page's rows only, one lookup each.
      snippet: this.db.prepare(`SELECT snippet(fts, 0, char(57344), char(57345), '…', ${SNIPPET_TOKENS}) FROM fts WHERE rowid = ? AND fts MATCH ?`).pluck(),
      fields: this.db.prepare(
        `SELECT d.message_index AS messageIndex, d.message_id AS messageId, d.role, d.kind, d.tool_name AS toolName, d.timestamp,
                s.session_id AS sessionId, s.agent_name AS agentName, s.agent_id AS agentId
           FROM docs d JOIN sessions s ON s.sid = d.sid WHERE d.id = ?`,
      ),
    };
  }

  /** `match` is a complete FTS5 expression; throws SqliteError on a bad one. */
  search(match: string, limit: number, offset: number): SearchRows {
    const { n, edge } = this.statements.window.get(match, MAX_CANDIDATES) as { n: number; edge: number | null };
    if (n === 0 || edge === null) return { total: 0, capped: false, rows: [] };
    const capped = n === MAX_CANDIDATES && this.statements.older.get(match, edge) !== undefined;
    const ranked = offset >= n || limit === 0 ? [] : (this.statements.ranked.all(match, edge, limit, offset) as Array<{ id: number; score: number }>);
    const rows = ranked.flatMap(({ id, score }): HitRow[] => {
      const fields = this.statements.fields.get(id) as Omit<HitRow, 'id' | 'score' | 'snippet'> | undefined;
      const snippet = this.statements.snippet.get(id, match) as string | undefined;
      return fields ? [{ id, score, snippet: markSnippet(snippet ?? ''), ...fields }] : [];
    });
    return { total: n, capped, rows };
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

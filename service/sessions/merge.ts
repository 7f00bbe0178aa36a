import type { AgentName } from '../runtimes/runtime.js';
import { titleFromPrompt } from '../transcripts/title.js';
import { foldTerminal } from './fold.js';
import { TERMINAL_AGENT_ID } from './history-layout.js';
import type { LogRef, SourceKind, SourceRecord } from './types.js';

/**
 * Who owns an id that several sources report: runtimea first (spec), its current SQLite
 * store before its older file store, then clia, the clia legacy record, clib, and last the
 * per-project index (which only fills in what the stores leave out, or lists a session no
 * store has).
 */
export const PRECEDENCE: readonly SourceKind[] = ['runtimea-sqlite', 'runtimea-file', 'clia', 'clia-legacy', 'clib', 'project', 'clia-home', 'clib-home', 'clia-kept', 'clib-kept', 'clib-zst'];

export interface SessionView {
  id: string;
  agentName: AgentName;
  agentId: string;
  title: string;
  /** Lowercased title for search. */
  titleKey: string;
  updatedAtMs: number;
  directory: string;
  /** Every source's record, in precedence order; [0] is the owner. */
  records: SourceRecord[];
  /** The log messages are read from: the first record, in precedence order, whose log exists. */
  log?: LogRef;
}

export interface MergeInputs {
  records: Iterable<SourceRecord>;
  /** Whether a record's log is there (a file seen on disk, a row in the SQLite store). */
  logExists(ref: LogRef): boolean;
  /** The first prompt of a log, when it has been read. */
  firstPrompt(ref: LogRef): string | undefined;
  /** The last directory a terminal history log states, once its first lines have been read. */
  logDirectory?(ref: LogRef): string | undefined;
  /** The program's own title of a terminal history log (docs/history.md), once read. */
  logTitle?(ref: LogRef): string | undefined;
}

const RANK: Readonly<Record<SourceKind, number>> = Object.fromEntries(PRECEDENCE.map((kind, i) => [kind, i])) as Record<SourceKind, number>;

/** Every session, newest first (ties by id), one per id. */
export function mergeSessions(inputs: MergeInputs): SessionView[] {
  const byId = new Map<string, SourceRecord[]>();
  for (const record of foldTerminal(inputs.records)) {
    const list = byId.get(record.id);
    if (list) list.push(record);
    else byId.set(record.id, [record]);
  }
  const views: SessionView[] = [];
  for (const list of byId.values()) {
    if (list.length > 1) list.sort(byPrecedence);
    views.push(sessionView(list, inputs));
  }
  return views.sort(newestFirst);
}

const AGENT_RANK: Readonly<Record<AgentName, number>> = { runtimea: 0, clia_code: 1, clib: 2 };

/**
 * Records of one id in the order that decides: by source, then (several project indexes, or
 * entries naming different runtimes) runtimea's first, then by file. Never by the order the
 * files were read in, which varies from start to start.
 */
export function byPrecedence(a: SourceRecord, b: SourceRecord): number {
  return rankOf(a) - rankOf(b) || AGENT_RANK[a.agentName] - AGENT_RANK[b.agentName] || compare(fileOf(a), fileOf(b));
}

/**
 * A terminal session the app resumed has an entry in the service's store under the
 * `terminal` agent id (its turns' bookkeeping); the program's own file stays its owner and
 * its log, which holds the terminal's turns and the app's (docs/history.md).
 */
function rankOf(r: SourceRecord): number {
  return r.agentId === TERMINAL_AGENT_ID && (r.source === 'clia' || r.source === 'clib') ? PRECEDENCE.length : RANK[r.source];
}

function fileOf(r: SourceRecord): string {
  return r.indexFile ?? (r.log ? (r.log.kind === 'sqlite' ? r.log.db : r.log.path) : '');
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function newestFirst(a: SessionView, b: SessionView): number {
  return b.updatedAtMs - a.updatedAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** One session from its records, in precedence order. */
export function sessionView(records: SourceRecord[], inputs: Omit<MergeInputs, 'records'>): SessionView {
  const owner = records[0]!;
  let project: SourceRecord | undefined;
  let log: LogRef | undefined;
  let directory: string | undefined;
  let newest = 0;
  for (const r of records) {
    if (r.source === 'project') project ??= r;
    if (!log && r.log && inputs.logExists(r.log)) log = r.log;
    directory ??= nonBlank(r.directory);
    if ((r.updatedAtMs ?? 0) > newest) newest = r.updatedAtMs!;
  }
  // A compressed rollout is not read for messages, but its start names it (docs/history.md).
  const named = log ?? compressedLog(records);
  return savedView(owner, {
    title: nonBlank(owner.title) ?? nonBlank(project?.title) ?? programTitle(named, inputs) ?? promptTitle(named, inputs) ?? '',
    // runtimea's own folder is an OpenClaw agent, not a project: the project index knows the project.
    agentId: owner.agentName === 'runtimea' && project ? project.agentId : owner.agentId,
    updatedAtMs: owner.updatedAtMs ?? newest,
    directory: directory ?? (named && inputs.logDirectory?.(named)) ?? '',
    records,
    log,
  });
}

/** A session's compressed rollout (`.jsonl.zst`), whose start the listing reads for its title. */
export function compressedLog(records: readonly SourceRecord[]): LogRef | undefined {
  return records.find((r) => r.source === 'clib-zst')?.log;
}

/** What a view holds beyond its owner's id and agent: what sessionView decides, and a saved listing gives back. */
export type ViewFields = Pick<SessionView, 'title' | 'agentId' | 'updatedAtMs' | 'directory' | 'records' | 'log'>;

/** A view from its owning record and its fields (made by sessionView, or read from a saved listing). */
export function savedView(owner: SourceRecord, fields: ViewFields): SessionView {
  const { title, log } = fields;
  const view: SessionView = { id: owner.id, agentName: owner.agentName, agentId: fields.agentId, title, titleKey: title.toLowerCase(), updatedAtMs: fields.updatedAtMs, directory: fields.directory, records: fields.records };
  if (log) view.log = log;
  return view;
}

function programTitle(log: LogRef | undefined, inputs: Omit<MergeInputs, 'records'>): string | undefined {
  const title = log ? inputs.logTitle?.(log) : undefined;
  return title === undefined ? undefined : nonBlank(titleFromPrompt(title));
}

function promptTitle(log: LogRef | undefined, inputs: Omit<MergeInputs, 'records'>): string | undefined {
  const prompt = log ? inputs.firstPrompt(log) : undefined;
  return prompt === undefined ? undefined : nonBlank(titleFromPrompt(prompt));
}

export function nonBlank(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  return trimmed ? trimmed : undefined;
}

/** Ids whose title comes from an index: the owning record's title, or a project index's. */
export function titledIds(records: readonly SourceRecord[]): Set<string> {
  const owners = new Map<string, SourceRecord>();
  const titled = new Set<string>();
  for (const r of records) {
    const owner = owners.get(r.id);
    if (!owner || byPrecedence(r, owner) < 0) owners.set(r.id, r);
    if (r.source === 'project' && nonBlank(r.title)) titled.add(r.id);
  }
  for (const [id, owner] of owners) if (nonBlank(owner.title)) titled.add(id);
  return titled;
}

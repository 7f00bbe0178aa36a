import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SessionView } from '../sessions/merge.js';
import { mapLimited } from '../sessions/limit.js';
import { AGENT_FILE, subagentsBeside } from '../sessions/subagents.js';
import type { SessionLog } from '../sessions/pipeline.js';

/** A sub-agent's transcript read for usage, as a log of its parent session. */
export interface SubagentLog extends SessionLog {
  /** The parent's log id (logId): its records win over a side-chain copy of them. */
  parentId: string;
}

/** Folders listed at once (a readdir each; most sessions have no sub-agents). */
const LIST_CONCURRENCY = 16;
/** A legacy transcript names its session in its first record, within this many bytes. */
const HEAD_BYTES = 16_384;
const SESSION_ID = /"sessionId":"([^"]{1,128})"/;

type Listing = { mtimeMs: number; files: string[] };
type ProjectListing = { mtimeMs: number; names: Set<string> };

/**
 * Claude Code writes each sub-agent's transcript apart (docs/history.md):
 * `<key>/<sessionId>/subagents/agent-<agentId>.jsonl` (also nested deeper, 2.1.332), and
 * before that `<key>/agent-<agentId>.jsonl`, whose records name the parent's `sessionId`.
 * Their tokens are the parent session's (ccusage reads every `*.jsonl` under `projects/`).
 * Only terminal sessions read from Claude Code's own file (or from the service's kept copy,
 * beside which the keeper copies them) have them here: a session the service ran counts its
 * turns from its `result` lines, which cover its sub-agents' calls.
 *
 * A project folder is listed again when its mtime changed (an entry came or went); a
 * session's `subagents/` only when the session has a folder and its file changed (the parent
 * writes the Agent tool's result after its sub-agent ends): an unchanged history costs a stat
 * per project.
 */
export class SubagentLogs {
  private listed = new Map<string, Listing>();
  /** Project folders' entries: which sessions have a folder, and the legacy transcripts. */
  private projects = new Map<string, ProjectListing>();
  /** Legacy transcripts' sessions, by path (a file's first record does not change). */
  private legacyOwner = new Map<string, string | undefined>();

  async of(views: readonly SessionView[], parentId: (view: SessionView) => string): Promise<SubagentLog[]> {
    const parents = views.flatMap((v) => {
      const file = ownFile(v);
      return file ? [{ v, file }] : [];
    });
    const projects = await this.listProjects(parents.map((p) => path.dirname(p.file)));
    const next = new Map<string, Listing>();
    const lists = await mapLimited(parents, LIST_CONCURRENCY, async ({ v, file }) => {
      // Most sessions have no folder of their own: no readdir for them.
      if (!projects.get(path.dirname(file))!.names.has(path.basename(file, '.jsonl'))) return [];
      const dir = subagentsBeside(file);
      const known = this.listed.get(dir);
      const entry = known && known.mtimeMs === v.updatedAtMs ? known : { mtimeMs: v.updatedAtMs, files: await agentFiles(dir) };
      next.set(dir, entry);
      return entry.files;
    });
    this.listed = next;
    const legacy = await this.legacyFiles(projects);
    return parents.flatMap(({ v }, i) => [...lists[i]!, ...(legacy.get(v.id) ?? [])].map((file) => subagentLog(v, file, parentId(v))));
  }

  /** The entries of these project folders, listed again when a folder's mtime changed (an entry came or went). */
  private async listProjects(dirs: string[]): Promise<Map<string, ProjectListing>> {
    const next = new Map<string, ProjectListing>();
    await mapLimited([...new Set(dirs)], LIST_CONCURRENCY, async (dir) => {
      const mtimeMs = (await stat(dir).catch(() => undefined))?.mtimeMs ?? 0;
      const known = this.projects.get(dir);
      next.set(dir, known && known.mtimeMs === mtimeMs ? known : { mtimeMs, names: new Set(await readdir(dir).catch(() => [] as string[])) });
    });
    this.projects = next;
    return next;
  }

  /** `<key>/agent-*.jsonl` of the project folders, by the session their records name. */
  private async legacyFiles(projects: Map<string, ProjectListing>): Promise<Map<string, string[]>> {
    const files = [...projects].flatMap(([dir, l]) => [...l.names].filter((n) => AGENT_FILE.test(n)).sort().map((n) => path.join(dir, n)));
    const owners = new Map<string, string | undefined>();
    await mapLimited(files, LIST_CONCURRENCY, async (file) => {
      owners.set(file, this.legacyOwner.has(file) ? this.legacyOwner.get(file) : await sessionOf(file));
    });
    this.legacyOwner = owners;
    const bySession = new Map<string, string[]>();
    for (const [file, owner] of owners) if (owner !== undefined) bySession.set(owner, [...(bySession.get(owner) ?? []), file]);
    return bySession;
  }
}

function subagentLog(v: SessionView, file: string, parentId: string): SubagentLog {
  return { sessionId: v.id, agentName: v.agentName, agentId: v.agentId, title: v.title, updatedAtMs: v.updatedAtMs, log: { kind: 'file', format: 'clia-agent', path: file }, parentId };
}

/**
 * The file a terminal session is read from: Claude Code's own, or the service's kept copy once
 * the program deleted it (its sub-agents are kept beside it in the same shape). One of the two,
 * never both: the sub-agents' tokens count once.
 */
function ownFile(view: SessionView): string | undefined {
  const log = view.log;
  if (log?.kind !== 'file' || log.format !== 'clia') return undefined;
  return view.records.some((r) => (r.source === 'clia-home' || r.source === 'clia-kept') && r.log?.kind === 'file' && r.log.path === log.path) ? log.path : undefined;
}

/** Every `agent-*.jsonl` below the folder, sorted; none when it is not there. */
async function agentFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return names
    .filter((n) => AGENT_FILE.test(path.basename(n)))
    .sort()
    .map((n) => path.join(dir, n));
}

/** The session a legacy transcript's first record names. */
async function sessionOf(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
    return SESSION_ID.exec(buffer.subarray(0, bytesRead).toString('utf8'))?.[1];
  } finally {
    await handle.close();
  }
}

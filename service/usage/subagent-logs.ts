import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SessionView } from '../sessions/merge.js';
import { mapLimited } from '../sessions/limit.js';
import { AGENT_FILE } from '../sessions/subagents.js';
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

/**
 * Claude Code writes each sub-agent's transcript apart (docs/history.md):
 * `<key>/<sessionId>/subagents/agent-<agentId>.jsonl` (also nested deeper, 2.1.332), and
 * before that `<key>/agent-<agentId>.jsonl`, whose records name the parent's `sessionId`.
 * Their tokens are the parent session's (ccusage reads every `*.jsonl` under `projects/`).
 * Only terminal sessions read from Claude Code's own file have them here: a session the
 * service ran counts its turns from its `result` lines, which cover its sub-agents' calls.
 *
 * A session's folder is listed again only when its file changed (the parent writes the
 * Agent tool's result after its sub-agent ends), a project folder when its mtime changed (a
 * file was added): an unchanged history costs a stat per project.
 */
export class SubagentLogs {
  private listed = new Map<string, Listing>();
  private projects = new Map<string, Listing>();
  /** Legacy transcripts' sessions, by path (a file's first record does not change). */
  private readonly legacyOwner = new Map<string, string | undefined>();

  async of(views: readonly SessionView[], parentId: (view: SessionView) => string): Promise<SubagentLog[]> {
    const parents = views.flatMap((v) => {
      const file = ownFile(v);
      return file ? [{ v, file }] : [];
    });
    const next = new Map<string, Listing>();
    const lists = await mapLimited(parents, LIST_CONCURRENCY, async ({ v, file }) => {
      const dir = `${file.slice(0, -'.jsonl'.length)}/subagents`;
      const known = this.listed.get(dir);
      const entry = known && known.mtimeMs === v.updatedAtMs ? known : { mtimeMs: v.updatedAtMs, files: await agentFiles(dir) };
      next.set(dir, entry);
      return entry.files;
    });
    this.listed = next;
    const legacy = await this.legacyFiles(parents.map((p) => path.dirname(p.file)));
    return parents.flatMap(({ v }, i) => [...lists[i]!, ...(legacy.get(v.id) ?? [])].map((file) => subagentLog(v, file, parentId(v))));
  }

  /** `<key>/agent-*.jsonl` of these project folders, by the session their records name. */
  private async legacyFiles(dirs: string[]): Promise<Map<string, string[]>> {
    const next = new Map<string, Listing>();
    await mapLimited([...new Set(dirs)], LIST_CONCURRENCY, async (dir) => {
      const mtimeMs = (await stat(dir).catch(() => undefined))?.mtimeMs ?? 0;
      const known = this.projects.get(dir);
      const files = known && known.mtimeMs === mtimeMs ? known.files : (await readdir(dir).catch(() => [] as string[])).filter((n) => AGENT_FILE.test(n)).map((n) => path.join(dir, n));
      next.set(dir, { mtimeMs, files });
    });
    this.projects = next;
    const bySession = new Map<string, string[]>();
    const files = [...next.values()].flatMap((l) => l.files);
    await mapLimited(files, LIST_CONCURRENCY, async (file) => {
      if (!this.legacyOwner.has(file)) this.legacyOwner.set(file, await sessionOf(file));
      const owner = this.legacyOwner.get(file);
      if (owner !== undefined) bySession.set(owner, [...(bySession.get(owner) ?? []), file]);
    });
    for (const file of this.legacyOwner.keys()) if (!files.includes(file)) this.legacyOwner.delete(file);
    for (const list of bySession.values()) list.sort();
    return bySession;
  }
}

function subagentLog(v: SessionView, file: string, parentId: string): SubagentLog {
  return { sessionId: v.id, agentName: v.agentName, agentId: v.agentId, title: v.title, updatedAtMs: v.updatedAtMs, log: { kind: 'file', format: 'clia-agent', path: file }, parentId };
}

/** Claude Code's own file of the session when the session is read from it (a terminal session). */
function ownFile(view: SessionView): string | undefined {
  const log = view.log;
  if (log?.kind !== 'file' || log.format !== 'clia') return undefined;
  return view.records.some((r) => r.source === 'clia-home' && r.log?.kind === 'file' && r.log.path === log.path) ? log.path : undefined;
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

import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { SessionView } from '../sessions/merge.js';
import { mapLimited } from '../sessions/limit.js';
import { AGENT_FILE, subagentsDir } from '../sessions/subagents.js';
import type { SessionLog } from '../sessions/pipeline.js';

/** A sub-agent's transcript read for usage, as a log of its parent session. */
export interface SubagentLog extends SessionLog {
  /** The parent's log id (logId): its records win over a side-chain copy of them. */
  parentId: string;
}

/** Sub-agent folders listed at once (a readdir each; most sessions have none). */
const LIST_CONCURRENCY = 16;

/**
 * Claude Code writes each sub-agent's transcript apart (docs/history.md):
 * `<key>/<sessionId>/subagents/agent-<agentId>.jsonl`, also nested deeper (2.1.332). Their
 * tokens are the parent session's (ccusage counts them: it reads every `*.jsonl` under
 * `projects/`). Only terminal sessions read from Claude Code's own file have them here: a
 * session the service ran counts its turns from its `result` lines, which cover the
 * sub-agents' calls already.
 *
 * A session's folder is listed again only when its file changed (the parent writes the tool
 * result after its sub-agent ends), so an unchanged history costs no readdir.
 */
export class SubagentLogs {
  private listed = new Map<string, { updatedAtMs: number; files: string[] }>();

  async of(views: readonly SessionView[], parentId: (view: SessionView) => string): Promise<SubagentLog[]> {
    const parents = views.filter((v) => ownFile(v));
    const next = new Map<string, { updatedAtMs: number; files: string[] }>();
    const lists = await mapLimited(parents, LIST_CONCURRENCY, async (v) => {
      const dir = subagentsDir(v)!;
      const known = this.listed.get(dir);
      const entry = known && known.updatedAtMs === v.updatedAtMs ? known : { updatedAtMs: v.updatedAtMs, files: await agentFiles(dir) };
      next.set(dir, entry);
      return entry.files;
    });
    this.listed = next;
    return parents.flatMap((v, i) =>
      lists[i]!.map((file) => ({
        sessionId: v.id,
        agentName: v.agentName,
        agentId: v.agentId,
        title: v.title,
        updatedAtMs: v.updatedAtMs,
        log: { kind: 'file' as const, format: 'clia-agent' as const, path: file },
        parentId: parentId(v),
      })),
    );
  }
}

/** Whether the session is read from Claude Code's own file (a terminal session). */
function ownFile(view: SessionView): boolean {
  const log = view.log;
  return log?.kind === 'file' && log.format === 'clia' && view.records.some((r) => r.source === 'clia-home' && r.log?.kind === 'file' && r.log.path === log.path);
}

/** Every `agent-*.jsonl` below the folder, sorted; none when it is not there. */
async function agentFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return names
    .filter((n) => AGENT_FILE.test(path.basename(n)))
    .sort()
    .map((n) => path.join(dir, n));
}

import { readdir, readFile, stat } from 'node:fs/promises';
import { HttpError } from '../errors.js';
import { SAFE_ID } from '../ids.js';
import type { Page } from './file-log.js';
import { mapLimited } from './limit.js';
import type { SessionView } from './merge.js';
import type { SessionIndex } from './session-index.js';
import type { LogRef } from './types.js';

/** A sub-agent a session started, as `GET /api/sessions/{id}/subagents` lists it. */
export interface Subagent {
  subagent_id: string;
  /** The parent's tool call that started it (its `Agent`/`Task` tool_use id), when recorded. */
  tool_call_id: string | null;
  description: string | null;
  message_count: number;
  started_at: string;
}

/** A sub-agent's transcript file (its sidecar is `agent-<id>.meta.json`). */
export const AGENT_FILE = /^agent-([A-Za-z0-9_-]{1,128})\.jsonl$/;
/** A sub-agent's sidecar. */
export const AGENT_META = /^agent-([A-Za-z0-9_-]{1,128})\.meta\.json$/;

/** A session's sub-agents' folder, beside its file: `<dir>/<sessionId>/subagents` (the program's and the kept copy's alike). */
export function subagentsBeside(sessionFile: string): string {
  return `${sessionFile.slice(0, -'.jsonl'.length)}/subagents`;
}

/**
 * Claude Code writes each sub-agent's transcript apart (docs/history.md):
 * `<key>/<sessionId>/subagents/agent-<agentId>.jsonl` with a sidecar
 * `agent-<agentId>.meta.json` `{description, toolUseId, agentType, ...}` (2.1.330). Read on
 * request, beside the session's own file while the program has it, else beside the service's
 * kept copy (history-keep-subagents.ts keeps them in the same shape).
 */
export async function subagentsOf(index: SessionIndex, view: SessionView): Promise<Subagent[]> {
  const dir = subagentsDir(view);
  if (!dir) return [];
  const names = await readdir(dir).catch(() => [] as string[]);
  const ids = names.flatMap((n) => AGENT_FILE.exec(n)?.[1] ?? []).sort();
  const listed = await mapLimited(ids, 8, (id) => describe(index, dir, id));
  return listed.sort((a, b) => a.started_at.localeCompare(b.started_at) || a.subagent_id.localeCompare(b.subagent_id));
}

/** A page of one sub-agent's messages (`?subagent=`), paged as the session's own. */
export async function subagentPage(index: SessionIndex, view: SessionView, subagentId: string, offset: number, limit: number): Promise<Page> {
  const dir = subagentsDir(view);
  if (!dir || !SAFE_ID.test(subagentId) || !(await stat(`${dir}/agent-${subagentId}.jsonl`).then((s) => s.isFile(), () => false))) throw new HttpError(404, 'Sub-agent not found');
  return index.logs.page(agentLog(dir, subagentId), offset, limit);
}

async function describe(index: SessionIndex, dir: string, id: string): Promise<Subagent> {
  const meta = await readFile(`${dir}/agent-${id}.meta.json`, 'utf8').then((t) => JSON.parse(t) as Record<string, unknown>, () => ({}) as Record<string, unknown>);
  const first = await index.logs.page(agentLog(dir, id), 0, 1).catch(() => undefined);
  const startedAt = first?.messages[0]?.timestamp ?? (await stat(`${dir}/agent-${id}.jsonl`)).mtime.toISOString();
  return {
    subagent_id: id,
    tool_call_id: typeof meta.toolUseId === 'string' ? meta.toolUseId : null,
    description: typeof meta.description === 'string' ? meta.description : null,
    message_count: first?.total ?? 0,
    started_at: startedAt,
  };
}

function agentLog(dir: string, id: string): LogRef {
  return { kind: 'file', format: 'clia-agent', path: `${dir}/agent-${id}.jsonl` };
}

/** `<key>/<sessionId>/subagents` beside Claude Code's own file of the session, else beside its kept copy. */
function subagentsDir(view: SessionView): string | undefined {
  const own = view.records.find((r) => r.source === 'clia-home' && r.log?.kind === 'file') ?? view.records.find((r) => r.source === 'clia-kept' && r.log?.kind === 'file');
  return own?.log?.kind === 'file' ? subagentsBeside(own.log.path) : undefined;
}

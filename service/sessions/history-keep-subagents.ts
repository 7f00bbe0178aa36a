import { readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { copyBytes } from './history-copy.js';
import { AGENT_FILE, AGENT_META, subagentsBeside } from './subagents.js';

/** A sub-agent's file: its path below `subagents/` and its size. */
interface AgentFile {
  rel: string;
  size: number;
}

/**
 * Claude Code's sub-agents of a kept session (docs/history.md): every
 * `<sessionId>/subagents/**\/agent-*.jsonl` and `agent-*.meta.json` beside the program's file
 * is copied beside the session's copy in the same shape, `<kept>/<sessionId>/subagents/...`:
 * the kept folders' layout lists only `<id>.jsonl`, so these are no sessions, and the readers
 * (subagents.ts, usage's subagent-logs.ts) find them beside whichever file the session is read
 * from. Transcripts get their appends, sidecars are copied whole when they change. Listed when
 * the session changed (the parent writes the Agent tool's result after its sub-agent ends) and
 * at each start's full pass; their bytes count in the session's share of the bound.
 */
export class KeptSubagents {
  /** The last listing of each kept session's sub-agents, by the session's copy. */
  private readonly listed = new Map<string, AgentFile[]>();
  /** The source inode each sub-agent's copy was made from, by the session's copy then `rel`. */
  private readonly from = new Map<string, Map<string, number>>();

  /**
   * The bytes of a session's sub-agents: listed again when the session changed (`fresh`),
   * from the program's folder while its file is there (`source`), else from the kept one.
   */
  async bytes(kept: string, source: string | undefined, fresh: boolean): Promise<number> {
    if (fresh) {
      const files = await agentFiles(subagentsBeside(source ?? kept));
      // Most sessions have none: no entry for them.
      if (files.length > 0) this.listed.set(kept, files);
      else this.listed.delete(kept);
    }
    return (this.listed.get(kept) ?? []).reduce((sum, f) => sum + f.size, 0);
  }

  /** Brings the copies of what `bytes` last listed in the program's folder up to it. */
  async copy(source: string, kept: string): Promise<void> {
    const [from, to] = [subagentsBeside(source), subagentsBeside(kept)];
    const inodes = this.from.get(kept) ?? new Map<string, number>();
    this.from.set(kept, inodes);
    for (const { rel } of this.listed.get(kept) ?? []) {
      const copied = await copyBytes(path.join(from, rel), path.join(to, rel), inodes.get(rel), AGENT_FILE.test(path.basename(rel)));
      if (!copied) continue;
      // Not sources of the index: put in place at once.
      if (copied.temp) await rename(copied.temp, path.join(to, rel));
      inodes.set(rel, copied.ino);
    }
  }

  /** Removes a session's kept sub-agents (`<kept>/<sessionId>/`), with the session's copy. */
  async drop(kept: string): Promise<void> {
    this.listed.delete(kept);
    this.from.delete(kept);
    await rm(kept.slice(0, -'.jsonl'.length), { recursive: true, force: true });
  }
}

/** Every sub-agent transcript and sidecar below the folder, with sizes; none when it is not there. */
async function agentFiles(dir: string): Promise<AgentFile[]> {
  const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  const rels = names.filter((n) => AGENT_FILE.test(path.basename(n)) || AGENT_META.test(path.basename(n))).sort();
  const files: AgentFile[] = [];
  for (const rel of rels) {
    const st = await stat(path.join(dir, rel)).catch(() => undefined);
    if (st?.isFile()) files.push({ rel, size: st.size });
  }
  return files;
}

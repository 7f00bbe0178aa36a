import path from 'node:path';
import { JsonFile } from '../stores/json-file.js';
import type { AgentName } from './runtime.js';

/**
 * The per-project session index, `<projects root>/<pid>/.space/sessions/sessionslist.json`:
 * an object keyed by session id. Every runtime records its sessions here so backend selection
 * (spec: "scanning the per-project index") finds the owner of a session id.
 */
export interface ProjectSessionEntry {
  sessionId: string;
  agent_name: AgentName;
  title: string;
  /** Epoch ms. */
  updatedAt: number;
  directory: string;
}

export function projectSessionsFile(projectsRoot: string, projectId: string): string {
  return path.join(projectsRoot, projectId, '.space', 'sessions', 'sessionslist.json');
}

/** Creates or merges the entry of one session; the first title recorded is kept. */
export function recordProjectSession(projectsRoot: string, projectId: string, entry: ProjectSessionEntry): Promise<void> {
  const file = new JsonFile<Record<string, ProjectSessionEntry>>(projectSessionsFile(projectsRoot, projectId), () => ({}));
  return file.update((current) => {
    const index = current && typeof current === 'object' && !Array.isArray(current) ? current : {};
    const previous = Object.hasOwn(index, entry.sessionId) ? index[entry.sessionId] : undefined;
    const merged = { ...previous, ...entry, title: previous?.title || entry.title };
    return { next: { ...index, [entry.sessionId]: merged }, result: undefined };
  });
}

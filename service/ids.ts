/**
 * The spec's shared vocabulary of names and ids, written once: every folder that checks an
 * agent name or an id that becomes a path segment imports it from here.
 */

/** The spec's agent names, on the wire and on disk (see the glossary in README.md). */
export const AGENT_NAMES = ['runtimea', 'clia_code', 'clib'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

export function isAgentName(value: unknown): value is AgentName {
  return (AGENT_NAMES as readonly unknown[]).includes(value);
}

/**
 * A session, agent or project id safe to use as one path segment. It still matches `.` and
 * `..`; callers that join it onto a path refuse those two as well.
 */
export const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

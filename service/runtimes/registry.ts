import type { ServiceContext } from '../context.js';
import { ClibRuntime } from './clib/runtime.js';
import { createCliaRuntime } from './clia/runtime.js';
import type { AgentName, Runtime } from './runtime.js';
import { RuntimeaRuntime } from './runtimea/runtime.js';

/**
 * The one place runtimes are registered. The insertion order is the order in which the chat
 * engine asks runtimes whether they own a session id, so `runtimea` goes first (the spec:
 * "when both runtimes report the same session id, the runtimea entry wins").
 * An agent name the manifests know but that has no entry here answers 503 at prompt time.
 */
export function createRuntimes(ctx: ServiceContext): Map<AgentName, Runtime> {
  const runtimes = new Map<AgentName, Runtime>();
  runtimes.set('runtimea', new RuntimeaRuntime(ctx));
  runtimes.set('clia_code', createCliaRuntime(ctx));
  runtimes.set('clib', new ClibRuntime(ctx));
  return runtimes;
}

import type { Core } from '../core.js';
import { ClibRuntime } from './clib/runtime.js';
import { CliaRuntime } from './clia/runtime.js';
import type { AgentName, Runtime } from './runtime.js';
import type { RuntimeaGateway } from './runtimea/gateway.js';
import { RuntimeaRuntime } from './runtimea/runtime.js';
import type { SentAttachments } from './runtimea/sent-attachments.js';

/** What the runtimes read beyond Core: the service's one runtimea gateway and its record of sent attachments (the composition root makes both). */
export interface RuntimesDeps extends Core {
  readonly runtimeaGateway: RuntimeaGateway;
  readonly runtimeaAttachments: SentAttachments;
}

/**
 * The one place runtimes are registered. The insertion order is the order in which the chat
 * engine asks runtimes whether they own a session id, so `runtimea` goes first (the spec:
 * "when both runtimes report the same session id, the runtimea entry wins").
 * An agent name the manifests know but that has no entry here answers 503 at prompt time.
 */
export function createRuntimes(deps: RuntimesDeps): Map<AgentName, Runtime> {
  const runtimes = new Map<AgentName, Runtime>();
  runtimes.set('runtimea', new RuntimeaRuntime(deps));
  runtimes.set('clia_code', new CliaRuntime(deps));
  runtimes.set('clib', new ClibRuntime(deps));
  return runtimes;
}

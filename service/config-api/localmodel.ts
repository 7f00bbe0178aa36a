/**
 * The local model server (Ollama) probe: GET <url>/api/tags, answered within a short timeout.
 * Anything but a 200 with Ollama's `{models: [{name}]}` shape means no server is running there.
 */
export interface LocalModelState {
  running: boolean;
  models?: string[];
}

const PROBE_TIMEOUT_MS = 1000;

export async function probeLocalModel(baseUrl: string): Promise<LocalModelState> {
  try {
    const res = await fetch(`${baseUrl}/api/tags`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: 'error' });
    if (!res.ok) {
      await res.body?.cancel();
      return { running: false };
    }
    const names = modelNames(await res.json());
    return names ? { running: true, models: names } : { running: false };
  } catch {
    return { running: false };
  }
}

function modelNames(body: unknown): string[] | undefined {
  const models = (body as { models?: unknown } | null)?.models;
  if (!Array.isArray(models)) return undefined;
  return models.flatMap((m) => (typeof (m as { name?: unknown })?.name === 'string' ? [(m as { name: string }).name] : []));
}

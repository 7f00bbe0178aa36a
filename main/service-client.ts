/**
 * The main process's own HTTP client of the in-process service, for the bridges whose flows
 * live behind routes (the bootstrap flows). It sends the launch token; a failure becomes an
 * Error carrying the service's `detail` text only.
 */
export interface ServiceClient {
  get(path: string): Promise<unknown>;
  post(path: string, body?: unknown): Promise<unknown>;
}

export function serviceClient(baseUrl: string, token: string, fetchImpl: typeof fetch = fetch): ServiceClient {
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetchImpl(`${baseUrl}${path}`, {
      method,
      headers: { 'X-Space-Token': token, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'error',
    });
    const text = await res.text();
    const parsed = parseJson(text);
    if (!res.ok) throw new Error(detailOf(parsed) ?? `The service answered HTTP ${res.status}`);
    return parsed;
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body ?? {}) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function detailOf(body: unknown): string | undefined {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  return typeof detail === 'string' ? detail : undefined;
}

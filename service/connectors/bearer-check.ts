import { HttpError } from '../errors.js';

/**
 * Asks a host whether a token is good: GET with the bearer, a short timeout, no redirects.
 * 2xx: the JSON body (or `{}`). 401: the host refused the token (400 to our client: a 401
 * would read as the service's own launch-token refusal). Anything else, or no answer: 502.
 * The token never appears in an error text.
 */
export interface BearerCheck {
  url: string;
  token: string;
  /** Who is asking, for texts: "The code host". */
  label: string;
  headers?: Record<string, string>;
}

const TIMEOUT_MS = 10_000;

export async function checkBearer(check: BearerCheck): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(check.url, {
      headers: { Accept: 'application/json', ...check.headers, Authorization: `Bearer ${check.token}` },
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new HttpError(502, `${check.label} is unreachable (${reason(err)})`);
  }
  const body = await res.json().catch(() => ({}));
  const message = messageOf(body);
  if (res.status === 401) throw new HttpError(400, `${check.label} rejected the token (401${message ? `: ${message}` : ''})`);
  if (!res.ok) throw new HttpError(502, `${check.label} answered ${res.status}${message ? `: ${message}` : ''}`);
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

function messageOf(body: unknown): string | undefined {
  const value = (body as { message?: unknown; error_description?: unknown; error?: unknown } | null) ?? {};
  const text = [value.message, value.error_description, value.error].find((v) => typeof v === 'string') as string | undefined;
  return text?.slice(0, 200);
}

function reason(err: unknown): string {
  if ((err as Error).name === 'TimeoutError') return 'timed out';
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code ?? (err as Error).message;
}

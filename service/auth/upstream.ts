import { z } from 'zod';
import { HttpError } from '../errors.js';

/**
 * The upstream identity and usage service, at SPACE_UPSTREAM_URL. The spec names only
 * `/usage/report`; the sign-in paths are the contract documented in docs/auth.md:
 *   POST /auth/start                                   -> {authorize_url, auth_session_id, poll_token}
 *   POST /auth/status  {auth_session_id, poll_token}   -> {status: pending | approved | expired}
 *   POST /auth/consume {auth_session_id, poll_token}   -> {access_token, refresh_token, expires_in, user_id}
 *   GET  /me           (Authorization: Bearer)         -> the user record
 * Every failure is an UpstreamError: 502 with the upstream status in the detail, or 502
 * when the upstream cannot be reached at all.
 */
export class UpstreamError extends HttpError {
  constructor(
    detail: string,
    /** The upstream's HTTP status; undefined when it could not be reached. */
    readonly upstreamStatus: number | undefined,
  ) {
    super(502, detail);
  }
}

export const StartAnswer = z.object({ authorize_url: z.string().min(1), auth_session_id: z.string().min(1), poll_token: z.string().min(1) });
export const StatusAnswer = z.object({ status: z.enum(['pending', 'approved', 'expired']) });
export const ConsumeAnswer = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string(),
  expires_in: z.number(),
  user_id: z.string().min(1),
});
export const UserRecord = z.looseObject({ user_id: z.string() });

export interface CallOptions {
  body?: unknown;
  bearer?: string;
}

const TIMEOUT_MS = 15_000;
/** Upstream error texts are passed on, but never at length. */
const MAX_DETAIL = 200;

export class UpstreamClient {
  constructor(
    private readonly baseUrl: string | undefined,
    private readonly timeoutMs = TIMEOUT_MS,
  ) {}

  get configured(): boolean {
    return this.baseUrl !== undefined;
  }

  start(): Promise<z.infer<typeof StartAnswer>> {
    return this.call('POST', '/auth/start', StartAnswer, { body: {} });
  }

  status(authSessionId: string, pollToken: string): Promise<z.infer<typeof StatusAnswer>> {
    return this.call('POST', '/auth/status', StatusAnswer, { body: { auth_session_id: authSessionId, poll_token: pollToken } });
  }

  consume(authSessionId: string, pollToken: string): Promise<z.infer<typeof ConsumeAnswer>> {
    return this.call('POST', '/auth/consume', ConsumeAnswer, { body: { auth_session_id: authSessionId, poll_token: pollToken } });
  }

  me(bearer: string): Promise<z.infer<typeof UserRecord>> {
    return this.call('GET', '/me', UserRecord, { bearer });
  }

  /** One JSON call, its answer checked against `schema`. Also for the usage report. */
  async call<T extends z.ZodType>(method: string, path: string, schema: T, options: CallOptions = {}): Promise<z.infer<T>> {
    if (!this.baseUrl) throw new HttpError(503, 'The upstream service is not configured (SPACE_UPSTREAM_URL is not set)');
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        // A redirect could carry the bearer elsewhere; the contract has none.
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new UpstreamError(`Upstream service unreachable: ${reason(err)}`, undefined);
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) throw new UpstreamError(`Upstream service error: HTTP ${res.status}${upstreamDetail(text)}`, res.status);
    const parsed = schema.safeParse(safeJson(text));
    if (!parsed.success) throw new UpstreamError(`Upstream service answered ${method} ${path} with an unexpected body`, res.status);
    return parsed.data;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `: <text>` from the upstream's {detail|error|message}, printable and short, or ''. */
function upstreamDetail(text: string): string {
  const body = safeJson(text) as Record<string, unknown> | undefined;
  const candidate = [body?.detail, body?.error_description, body?.error, body?.message].find((v) => typeof v === 'string') as string | undefined;
  if (!candidate) return '';
  return `: ${candidate.replace(/[^\x20-\x7e]/g, ' ').slice(0, MAX_DETAIL)}`;
}

function reason(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return 'timed out';
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}

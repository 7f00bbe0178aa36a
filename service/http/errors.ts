import type { ErrorRequestHandler, RequestHandler } from 'express';
import { HttpError } from '../errors.js';
import type { Logger } from '../log.js';

export { HttpError };

export const notFound: RequestHandler = (_req, _res, next) => {
  next(new HttpError(404, 'Not Found'));
};

interface ParserError {
  type?: string;
  status?: number;
  statusCode?: number;
}

/** Maps body-parser's typed failures to the texts clients see. */
function parserDetail(err: ParserError): [number, string] | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
      return [400, 'Malformed JSON body'];
    case 'entity.too.large':
      return [413, 'Request body too large'];
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return [415, 'Unsupported body encoding'];
    case 'request.aborted':
      return [400, 'Request aborted'];
    default:
      return undefined;
  }
}

/** The one terminal handler: every failure leaves as `{detail}`, never a stack trace. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const [status, detail] = describe(err);
    if (!(err instanceof HttpError) && status === 500) log.error({ err: errorSummary(err), path: req.path }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(status).json({ detail });
  };
}

function describe(err: unknown): [number, string] {
  if (err instanceof HttpError) return [err.status, err.message];
  const parsed = typeof err === 'object' && err !== null ? parserDetail(err as ParserError) : undefined;
  if (parsed) return parsed;
  const message = err instanceof Error ? err.message : String(err);
  return [500, message || 'Internal Server Error'];
}

function errorSummary(err: unknown): { message: string; errno?: string } {
  if (err instanceof Error) return { message: err.message, errno: (err as NodeJS.ErrnoException).code };
  return { message: String(err) };
}

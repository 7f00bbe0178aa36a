import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Paths pino blanks out wherever they appear in a log record. Request and response bodies
 * are never logged at all; this is the second line of defence for objects that are.
 */
const REDACT = [
  'authorization',
  'token',
  'access_token',
  'refresh_token',
  'poll_token',
  'key',
  'value',
  'code',
  'code_verifier',
  '*.authorization',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.poll_token',
  '*.key',
  '*.value',
  '*.code',
  '*.code_verifier',
  'headers["x-space-token"]',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'space' }, redact: { paths: REDACT, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

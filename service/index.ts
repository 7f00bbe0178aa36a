import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Router } from 'express';
import { buildApp } from './app/app.js';
import { answerClientError } from './app/client-error.js';
import { createContext, startServices, type ServiceContext, type Stage } from './app/context.js';
import { featureRouters } from './app/routes.js';
import { consumeAtStartup } from './auth/startup.js';
import type { Config } from './config.js';
import type { Host } from './host.js';
import { createLogger, type Logger } from './log.js';
import { reapRecordedChildren } from './process/child-records.js';
import { livePidsInGroup, stopGroup } from './process/supervisor.js';
import { flushWrites } from './stores/atomic.js';
import { sweepStaleTemps } from './temp-sweep.js';

export interface ServiceOptions {
  config: Config;
  host: Host;
  log?: Logger;
  /** Extra routers mounted after the feature routers (embedding hosts and tests). */
  extraRoutes?: (ctx: ServiceContext) => Router[];
}

export interface Service {
  readonly ctx: ServiceContext;
  /** Sweeps stale temp files of earlier runs, then binds the configured host and port; rejects (never falls back) if it cannot. */
  listen(): Promise<{ url: string; port: number }>;
  /** Stops accepting, ends open streams, stops every child group, flushes writes. */
  close(): Promise<void>;
}

export function createService(options: ServiceOptions): Service {
  const log = options.log ?? createLogger(options.config.logLevel);
  let server: Server | undefined;
  let stage: Stage = 'starting';
  const ctx = createContext(options.config, options.host, log, {
    port: () => (server?.address() as AddressInfo | null)?.port ?? options.config.port,
    stage: () => stage,
  });
  const app = buildApp(ctx, [...featureRouters(ctx), ...(options.extraRoutes?.(ctx) ?? [])]);
  const services = startServices(ctx);

  const listen = async (): Promise<{ url: string; port: number }> => {
    await sweepStaleTemps(options.config, log);
    // Programs an earlier run started and could not stop (it was killed) are stopped first.
    await reapRecordedChildren(options.config.paths.childrenFile, log, (pgid) => stopGroup(pgid, 3000), livePidsInGroup);
    // Spec: a sign-in handed over at launch is consumed before the first request is served.
    await consumeAtStartup(ctx);
    // A request without Host is refused by the trust guard (403 {detail}), not by Node's bare 400.
    const s = createServer({ requireHostHeader: false }, app);
    // No bound on a request's total time: a 100 MB upload on a slow link and SSE streams
    // are long by design. A body that stops flowing is ended by http/body-timeout.ts.
    s.requestTimeout = 0;
    s.headersTimeout = 30_000;
    s.keepAliveTimeout = 5_000;
    s.on('clientError', answerClientError);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(options.config.port, options.config.host, () => {
        s.off('error', reject);
        resolve();
      });
    });
    server = s;
    stage = 'ready';
    const port = ctx.port();
    return { url: `http://${formatHost(options.config.host)}:${port}`, port };
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      stage = 'stopping';
      const stopped = server ? new Promise<void>((resolve) => server!.close(() => resolve())) : Promise.resolve();
      await services.stop();
      await flushWrites();
      server?.closeIdleConnections();
      server?.closeAllConnections();
      await stopped;
    })());

  return { ctx, listen, close };
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

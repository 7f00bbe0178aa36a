import { Router } from 'express';
import type { AuthState } from '../auth/state.js';
import type { Core, Stage } from '../core.js';
import { which } from '../process/which.js';
import { packageInfo } from '../version.js';

/** What /health reads beyond Core: the service's own state, counted, never changed. */
export type StatusDeps = Core & {
  auth: AuthState;
  streams: { readonly size: number };
  startedAt: Date;
  port(): number;
  stage(): Stage;
};

/** The spec's status, stub and diagnostics endpoints. Stubs touch no disk. */
export function statusRoutes(deps: StatusDeps): Router {
  const router = Router();
  const info = packageInfo(deps.config.paths.appRoot);

  router.get('/', (_req, res) => {
    res.json({ status: 'Space API running', name: info.name, version: info.version });
  });

  router.get('/health', (_req, res) => {
    res.json(health(deps, info.version));
  });

  for (const path of ['/api/tools', '/api/skills', '/api/connectors', '/api/automations']) {
    router.get(path, (_req, res) => void res.json([]));
  }
  router.get('/api/mcp/status', (_req, res) => void res.json({ status: 'idle' }));
  router.get('/api/plugins/status', (_req, res) => void res.json({}));
  router.get('/api/localmodel/status', (_req, res) => void res.json({ binary_installed: false, running: false }));
  router.get('/api/workspace-memory', (_req, res) => void res.json({ memory: null }));
  return router;
}

function health(deps: StatusDeps, version: string): Record<string, unknown> {
  const { config } = deps;
  const cli = (bin: string): { bin: string; path: string | null } => ({ bin, path: which(bin) });
  return {
    status: 'ok',
    stage: deps.stage(),
    version,
    pid: process.pid,
    node: process.versions.node,
    host_kind: deps.host.kind,
    uptime_s: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
    listen: { host: config.host, port: deps.port() },
    upstream_url: config.upstreamUrl ?? null,
    agent_name: config.agentName,
    projects_root: config.projectsRoot,
    clis: {
      clia: cli(config.bins.clia),
      clib: cli(config.bins.clib),
      runtimea: cli(config.bins.runtimea),
      sync_tool: cli(config.bins.syncTool),
      codehost_cli: cli(config.bins.codehostCli),
    },
    auth: deps.auth.sanitized(),
    active_sessions: deps.streams.size,
    child_processes: deps.supervisor.size,
  };
}

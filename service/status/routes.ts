import { Router } from 'express';
import type { ServiceContext } from '../context.js';
import { which } from '../process/which.js';
import { packageInfo } from './version.js';

/** The spec's status, stub and diagnostics endpoints. Stubs touch no disk. */
export function statusRoutes(ctx: ServiceContext): Router {
  const router = Router();
  const info = packageInfo(ctx.config.paths.appRoot);

  router.get('/', (_req, res) => {
    res.json({ status: 'Space API running', name: info.name, version: info.version });
  });

  router.get('/health', (_req, res) => {
    res.json(health(ctx, info.version));
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

function health(ctx: ServiceContext, version: string): Record<string, unknown> {
  const { config } = ctx;
  const cli = (bin: string): { bin: string; path: string | null } => ({ bin, path: which(bin) });
  return {
    status: 'ok',
    stage: ctx.stage(),
    version,
    pid: process.pid,
    node: process.versions.node,
    host_kind: ctx.host.kind,
    uptime_s: Math.round((Date.now() - ctx.startedAt.getTime()) / 1000),
    listen: { host: config.host, port: ctx.port() },
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
    auth: ctx.auth.sanitized(),
    active_sessions: ctx.streams.size,
    child_processes: ctx.supervisor.size,
  };
}

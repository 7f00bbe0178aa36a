import type { Router } from 'express';
import { agentRoutes } from '../agents/routes.js';
import { authRoutes } from '../auth/routes.js';
import { bootstrapRoutes } from '../bootstrap/routes.js';
import { channelRoutes } from '../channels/routes.js';
import { chatRoutes } from '../chat/routes.js';
import { checkpointRoutes } from '../checkpoints/routes.js';
import { configRoutes } from '../config-api/routes.js';
import { connectorRoutes } from '../connectors/routes.js';
import { diagnosticsRoutes } from '../diagnostics/routes.js';
import { eventRoutes } from '../events/routes.js';
import { filesRoutes } from '../files/routes.js';
import { ftsRoutes } from '../fts/routes.js';
import { lifecycleRoutes } from '../lifecycle/routes.js';
import { limitsRoutes } from '../limits/routes.js';
import { budgetsRoutes } from '../budgets/routes.js';
import { onboardingRoutes } from '../onboarding/routes.js';
import { runtimeaRoutes } from '../runtimes/runtimea/routes.js';
import { secretsRoutes } from '../secrets/routes.js';
import { sessionRoutes } from '../sessions/routes.js';
import { statusRoutes } from '../status/routes.js';
import { usageRoutes } from '../usage/routes.js';
import type { ServiceContext } from './context.js';

/**
 * Every feature's router, in one list: the map from the spec's sections to code. Each takes
 * what it names (`Core & { ... }`); the context has all of it, so it is passed as it is.
 * Building a router starts nothing: the long-lived services are started by startServices.
 */
export function featureRouters(ctx: ServiceContext): Router[] {
  return [
    statusRoutes(ctx),
    lifecycleRoutes({ ...ctx, restartGateway: () => ctx.runtimeaGateway.restart() }),
    authRoutes(ctx),
    bootstrapRoutes(ctx),
    agentRoutes(ctx),
    secretsRoutes(ctx),
    configRoutes(ctx),
    onboardingRoutes(ctx),
    channelRoutes(ctx),
    runtimeaRoutes(ctx),
    filesRoutes(ctx),
    chatRoutes(ctx),
    eventRoutes(ctx),
    sessionRoutes({ ...ctx, sessionExtras: (id) => ctx.checkpoints.sessionExtras(id) }),
    checkpointRoutes(ctx),
    ftsRoutes(ctx),
    ...connectorRoutes(ctx),
    usageRoutes(ctx),
    limitsRoutes(ctx),
    budgetsRoutes(ctx),
    diagnosticsRoutes(ctx),
  ];
}

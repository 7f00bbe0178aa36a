import { SignIn } from '../auth/sign-in.js';
import { AuthState } from '../auth/state.js';
import { UpstreamClient } from '../auth/upstream.js';
import { ChatEngine } from '../chat/engine.js';
import { Checkpoints } from '../checkpoints/checkpoints.js';
import type { Config } from '../config.js';
import type { Core, Stage } from '../core.js';
import { EventHub } from '../events/hub.js';
import { startEventSources } from '../events/sources.js';
import { UploadLedger } from '../files/upload-ledger.js';
import { FtsIndex } from '../fts/fts-index.js';
import type { Host } from '../host.js';
import { HeadChecks } from '../http/head-checks.js';
import { SseRegistry } from '../http/sse.js';
import type { Logger } from '../log.js';
import { ChildRecords } from '../process/child-records.js';
import { Foreground } from '../process/foreground.js';
import { Supervisor } from '../process/supervisor.js';
import { createRuntimes } from '../runtimes/registry.js';
import type { AgentName, Runtime, RuntimeEvent } from '../runtimes/runtime.js';
import { RuntimeaGateway } from '../runtimes/runtimea/gateway.js';
import type { RuntimeaRuntime } from '../runtimes/runtimea/runtime.js';
import { SentAttachments } from '../runtimes/runtimea/sent-attachments.js';
import { historyRoots } from '../sessions/history-roots.js';
import { HistorySwitch } from '../sessions/history-switch.js';
import { TerminalSessions } from '../sessions/terminal-resume.js';
import { SessionIndex } from '../sessions/session-index.js';
import { UsageService } from '../usage/usage.js';
import { compactionWatch } from '../chat/compaction.js';
import { RuntimeaUsage } from '../limits/runtimea-usage.js';
import { LimitsStore } from '../limits/store.js';
import { limitsToEvents } from '../limits/events.js';
import { Budgets } from '../budgets/budgets.js';
import path from 'node:path';

/**
 * The composition root: everything the service builds once. createContext builds it (and
 * starts nothing), startServices starts the long-lived services in order and stops them in
 * the reverse order. Features never import this file: each names what it reads (`Core & {...}`,
 * in its own folder) and the assembly (app/) hands it this object, which has all of it.
 */
export interface ServiceContext extends Core {
  readonly streams: SseRegistry;
  /** Refusals decided before a request's body is read (a prompt at the turn cap). */
  readonly headChecks: HeadChecks;
  readonly auth: AuthState;
  /** The upstream identity and usage service (sign-in, whoami, usage report). */
  readonly upstream: UpstreamClient;
  /** The poll-token sign-in; the trusted shell (Electron main) drives it in-process. */
  readonly signIn: SignIn;
  /** The service's one runtimea gateway: the runtimea runtime, its status route and the lifecycle restart share it. */
  readonly runtimeaGateway: RuntimeaGateway;
  /** What the service attached to runtimea prompts (the gateway's store keeps no name or path). */
  readonly runtimeaAttachments: SentAttachments;
  /** The registered agent runtimes (runtimes/registry.ts). */
  readonly runtimes: ReadonlyMap<AgentName, Runtime>;
  /** Every runtime's sessions, merged and kept fresh by watchers. */
  readonly sessions: SessionIndex;
  /** Full-text search over the sessions' messages, fed by `sessions`. */
  readonly fts: FtsIndex;
  /** Passes a user waits for; background work (the full-text build) pauses during them. */
  readonly foreground: Foreground;
  /** The event channel (GET /api/events): features publish, every open view subscribes. */
  readonly events: EventHub;
  /** This run's uploads by file_id (a prompt may attach one). */
  readonly uploads: UploadLedger;
  /** Checkpoints around each turn, the turns ledger, diffs and reverts. */
  readonly checkpoints: Checkpoints;
  /** The chat engine: every turn of /api/chat/* and of the legacy chat endpoints. */
  readonly chat: ChatEngine;
  /** Whether the user's terminal history is read now (docs/history.md; the config API switches it). */
  readonly historySwitch: HistorySwitch;
  /** Usage analytics and the daily report to the upstream service. */
  readonly usage: UsageService;
  /** The programs' plan limits as their turns reported them (docs/limits.md). */
  readonly limits: LimitsStore;
  /** runtimea's plan windows, asked of its gateway (usage.status). */
  readonly runtimeaLimits: RuntimeaUsage;
  /** Spend budgets over the usage figures (docs/limits.md). */
  readonly budgets: Budgets;
  readonly startedAt: Date;
  /** The port actually listened on (the configured one, or the OS's pick for port 0). */
  port(): number;
  /** Lifecycle stage shown by /health. */
  stage(): Stage;
}

export type { Stage } from '../core.js';

/** The long-lived services once started: stop() ends them in order (index.ts calls it once, on close). */
export interface RunningServices {
  stop(): Promise<void>;
}

/** Builds every long-lived service, each from what it needs; nothing starts here. */
export function createContext(config: Config, host: Host, log: Logger, state: { port(): number; stage(): Stage }): ServiceContext {
  const core = { config, host, log, supervisor: new Supervisor(log, new ChildRecords(config.paths.childrenFile, log)) };
  const auth = new AuthState(config.apiKey);
  const upstream = new UpstreamClient(config.upstreamUrl);
  const foreground = new Foreground();
  const streams = new SseRegistry();
  const events = new EventHub();
  const uploads = new UploadLedger();
  const sessions = new SessionIndex(
    { runtimea: config.runtimea.stateDir, clia: config.paths.cliaSpace, clib: config.paths.clibSpace, projects: config.projectsRoot, ...historyRoots(config) },
    log,
    { countsFile: config.paths.sessionCountsFile, indexFile: config.paths.sessionIndexFile, foreground },
  );
  const runtimeaGateway = new RuntimeaGateway({ ...core, stage: state.stage });
  const runtimeaAttachments = new SentAttachments(config.paths.runtimeaAttachmentsDir);
  const runtimes = createRuntimes({ ...core, runtimeaGateway, runtimeaAttachments });
  const limits = new LimitsStore(limitsToEvents((event, data) => events.publish(event, data)));
  const runtimeaLimits = new RuntimeaUsage(limits, async () => (runtimes.get('runtimea') as Partial<RuntimeaRuntime> | undefined)?.usageStatus?.(), log);
  const usage = new UsageService({ ...core, sessions, foreground, auth, upstream });
  const budgets = new Budgets(path.join(path.dirname(config.paths.stateFile), 'budgets.json'), { usage: usage.store, sessions }, (event, data) => events.publish(event, data));
  const watches = [
    {
      event: (e: RuntimeEvent, t: { agentName: AgentName }) => limits.observe(t.agentName, e),
      ended: (t: { agentName: AgentName }) => void (t.agentName === 'runtimea' && runtimeaLimits.refresh()),
    },
    compactionWatch(events),
    { refuse: (t: { agentName: string; agentId: string | null }) => budgets.refuse(t), ended: () => void budgets.list().catch((err: unknown) => log.warn({ err: String(err) }, 'budgets: not evaluated')) },
  ];
  const checkpoints = new Checkpoints({ ...core, events, sessions, runtimes });
  const historySwitch = new HistorySwitch({ config, sessions, log });
  const history = new TerminalSessions(sessions, config.paths.claudeConfigDir, () => historySwitch.enabled);
  const chat = new ChatEngine({ ...core, runtimes, streams, events, uploads, sessions, checkpoints, watches, history });
  checkpoints.busy = (sessionId) => chat.busy(sessionId);
  return {
    ...core,
    streams,
    headChecks: new HeadChecks(),
    auth,
    upstream,
    signIn: new SignIn(upstream, auth, config.apiKey !== undefined),
    runtimeaGateway,
    runtimeaAttachments,
    runtimes,
    sessions,
    fts: new FtsIndex(sessions, config.paths.ftsIndex, log, foreground),
    foreground,
    events,
    uploads,
    checkpoints,
    chat,
    historySwitch,
    usage,
    limits,
    runtimeaLimits,
    budgets,
    startedAt: new Date(),
    port: state.port,
    stage: state.stage,
  };
}

/**
 * Starts the long-lived services: the usage store listens to the session index before it
 * builds, the index builds off the request path (the first sessions request waits for it),
 * the full-text index follows it (once every log is counted and, on a restart, once usage has
 * taken its default window from the saved aggregates: bounded, see FtsIndex.start), and the
 * event channel's sources come last.
 */
export function startServices(ctx: ServiceContext): RunningServices {
  const usageWarmed = ctx.usage.start();
  ctx.sessions.start();
  // A restart's usage view and the start's message counts first: the full-text build waits for both (bounded).
  ctx.fts.start(usageWarmed, ctx.sessions.counted());
  const eventSources = startEventSources(ctx.events, ctx.sessions, ctx.fts);
  ctx.historySwitch.start();
  return {
    stop: async () => {
      // First the work that ends streams with `done` (the chat engine aborts its running turns)
      // and the usage timer and store; then open streams, the indexes, and every child group.
      const results = await Promise.allSettled([ctx.chat.close(), ctx.usage.stop()]);
      for (const r of results) if (r.status === 'rejected') ctx.log.error({ err: String(r.reason) }, 'shutdown task failed');
      eventSources.stop();
      await ctx.historySwitch.close();
      await Promise.allSettled([...ctx.runtimes.values()].map((runtime) => runtime.close()));
      ctx.streams.closeAll();
      await ctx.fts.close();
      await ctx.sessions.close();
      await ctx.supervisor.stopAll();
    },
  };
}

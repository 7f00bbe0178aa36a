import { readFile } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';
import type { Logger } from '../../log.js';
import { runDetails, userRecordId, type RunDetails } from '../../transcripts/runtimea.js';
import { attachmentRecords, withFileNames } from '../attachments.js';
import { EventQueue } from '../event-queue.js';
import type { Approvals, Attachment, PermissionMode, RuntimeEvent, TurnUsage } from '../runtime.js';
import { errorEvent, recordInProject, sessionEvent } from '../turn-books.js';
import { parseChatData, refusalMessage, SseDataSplitter } from './chat-sse.js';
import type { GatewayEndpoint } from './endpoint.js';
import type { GatewayOperator } from './operator.js';
import type { GatewaySessionStore } from './session-store.js';
import type { SentAttachments } from './sent-attachments.js';
import { copyTranscript } from './transcript.js';
import { TurnActivity } from './turn-activity.js';
import { TurnPermissions } from './turn-permissions.js';

/**
 * One runtimea turn: POST /v1/chat/completions on the gateway (stream, include_usage, model
 * `openclaw/<agent>`, the session chosen by x-openclaw-session-key), turned into runtime
 * events. The request belongs to the turn, not to whoever reads it: a reader that goes away
 * does not close it (the gateway would cancel the run); only an abort does, on purpose.
 *
 * A new session has no id until the gateway writes the session's row (0.15-0.65 s after the
 * request, in the recorded runs): the turn polls the store for the row of its own fresh
 * session key, for up to ROW_WAIT_MS after the request went out. Until then the events are
 * held, so `session` comes before any text; text events carry the session id.
 */
export interface RuntimeaPlan {
  agent: string;
  /** Sent as x-openclaw-session-key; the gateway stores it as `agent:<agent>:<value>`. */
  sessionKeyHeader: string;
  sessionKey: string;
  /** Known for a resume. */
  sessionId?: string;
  /** x-openclaw-model: a provider/model override. */
  modelOverride?: string;
  text: string;
  /** Project folder under the projects root that gets the transcript copy. */
  projectId?: string;
  title: string;
  attachments?: readonly Attachment[];
  /** Default `auto`: the session keeps the gateway's own policy and nothing is asked. */
  permissionMode?: PermissionMode;
}

export interface RuntimeaDeps {
  endpoint: () => Promise<GatewayEndpoint>;
  store: GatewaySessionStore;
  /** Where the attachments of the prompts sent are kept (the gateway keeps an image as `[image]`). */
  sentAttachments: SentAttachments;
  log: Logger;
  projectsRoot: string;
  /** The operator connection, for a turn whose permission mode is not `auto`. */
  operator: GatewayOperator;
  rowWaitMs?: number;
}

/** How long a new session's turn waits for the gateway to write the session's row. */
export const ROW_WAIT_MS = 20_000;
const ROW_POLL_MS = 100;
const RETRY_AFTER_MS = 1000;

export class RuntimeaTurn {
  readonly queue = new EventQueue<RuntimeEvent>();
  private sessionId: string | undefined;
  private resolved: boolean;
  private held: RuntimeEvent[] = [];
  private readonly controller = new AbortController();
  private aborted = false;
  private sessionWaiters: Array<(id: string | null) => void> = [];
  private started = false;
  /** When the prompt went to the gateway (epoch ms), to find its user record afterwards. */
  private sentAt: number | undefined;
  private readonly permissions: TurnPermissions;
  /** Tool calls and results, live, for a turn that holds the operator connection anyway (one that asks). */
  private readonly activity: TurnActivity | undefined;

  constructor(
    private readonly deps: RuntimeaDeps,
    private readonly plan: RuntimeaPlan,
  ) {
    this.sessionId = plan.sessionId;
    this.resolved = !!plan.sessionId;
    const mode = plan.permissionMode ?? 'auto';
    this.permissions = new TurnPermissions(deps.operator, plan.sessionKey, mode, deps.log);
    if (mode !== 'auto') this.activity = new TurnActivity(deps.operator, plan.sessionKey, (event) => this.emit(event), deps.log);
  }

  /** The engine's answers to the exec approvals of a turn in a mode that asks (given when its stream runs it). */
  bindApprovals(approvals: Approvals | undefined): void {
    this.permissions.bind(approvals);
  }

  /** Starts the turn (once). */
  start(): this {
    if (!this.started) {
      this.started = true;
      void this.run();
    }
    return this;
  }

  /** The session id once the gateway recorded it, or null after `ms` (or when the turn ended without one). */
  sessionIdWithin(ms: number): Promise<string | null> {
    if (this.resolved) return Promise.resolve(this.sessionId ?? null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), ms);
      this.sessionWaiters.push((id) => {
        clearTimeout(timer);
        resolve(id);
      });
    });
  }

  /** Cancels the upstream run on purpose (the user's abort). */
  abort(): void {
    this.aborted = true;
    this.controller.abort();
  }

  /**
   * The turn, then its bookkeeping: the gateway's transcript of the session is read once,
   * after the stream ended, for the run's model and cost (the usage event) and the project's
   * copy; then the one terminal event.
   */
  private async run(): Promise<void> {
    let terminal: RuntimeEvent;
    try {
      terminal = await this.execute();
    } catch (err) {
      terminal = this.aborted ? { type: 'done', finishReason: 'aborted' } : errorEvent(err);
    }
    await this.activity?.end();
    await this.permissions.end();
    const { usage } = this;
    // The run's details only for a session known when its stream ended (as the usage was reported).
    const known = this.sessionId;
    if (!this.resolved) await this.resolveSession(await this.lookup());
    const jsonl = await this.transcript(usage && known ? known : undefined);
    if (usage) this.emit({ type: 'usage', usage: known && jsonl ? withRunDetails(usage.usage, runDetails(jsonl, usage.runId)) : usage.usage });
    await this.record(jsonl);
    await this.recordAttachments(jsonl);
    this.emit(terminal);
    this.queue.end();
  }

  /** The stream's usage of a completed turn, and its run id, for the usage event. */
  private usage: { usage: TurnUsage; runId: string | undefined } | undefined;

  private async execute(): Promise<RuntimeEvent> {
    let endpoint: GatewayEndpoint;
    try {
      endpoint = await this.deps.endpoint();
    } catch (err) {
      return { type: 'error', message: `The runtimea gateway is not available: ${(err as Error).message}` };
    }
    if (this.aborted) return { type: 'done', finishReason: 'aborted' };
    let response: IncomingMessage;
    let content: unknown;
    try {
      content = await userContent(this.plan.text, this.plan.attachments);
    } catch (err) {
      return { type: 'error', message: `An attachment could not be read: ${(err as Error).message}` };
    }
    try {
      await this.permissions.begin();
    } catch (err) {
      return { type: 'error', message: `The runtimea gateway did not take the permission mode: ${(err as Error).message}` };
    }
    // Live tool activity is a nicety: a turn goes on without it.
    await this.activity?.begin().catch((err: unknown) => this.deps.log.warn({ err: String(err) }, 'runtimea: live tool activity unavailable for this turn'));
    if (this.aborted) return { type: 'done', finishReason: 'aborted' };
    this.sentAt = Date.now();
    try {
      response = await this.post(endpoint, content);
    } catch (err) {
      // A gateway that just crashed may still look running for a moment: ask again once.
      if (this.aborted || !['ECONNREFUSED', 'ECONNRESET'].includes((err as { code?: string }).code ?? '')) throw err;
      await new Promise((r) => setTimeout(r, RETRY_AFTER_MS));
      response = await this.post(await this.deps.endpoint(), content);
    }
    if (!this.resolved) void this.pollRow();
    if (response.statusCode !== 200) return { type: 'error', message: refusalMessage(response.statusCode ?? 0, await readBody(response)) };
    const outcome = await this.consume(response);
    if (this.aborted) return { type: 'done', finishReason: 'aborted' };
    if (outcome.error) return { type: 'error', message: `The runtimea gateway reported an error: ${outcome.error}` };
    if (!outcome.done) return { type: 'error', message: 'The runtimea gateway closed the stream before the turn finished (it may have stopped; it is restarted automatically).' };
    if (outcome.usage) this.usage = { usage: outcome.usage, runId: outcome.runId };
    return { type: 'done', finishReason: 'stop' };
  }

  private post(endpoint: GatewayEndpoint, content: unknown): Promise<IncomingMessage> {
    const body = JSON.stringify({
      model: `openclaw/${this.plan.agent}`,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content }],
    });
    const url = new URL('/v1/chat/completions', endpoint.url);
    const headers: Record<string, string> = {
      // No bearer for a gateway whose auth mode is `none`.
      ...(endpoint.token ? { authorization: `Bearer ${endpoint.token}` } : {}),
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'content-length': String(Buffer.byteLength(body)),
      'x-openclaw-session-key': this.plan.sessionKeyHeader,
      ...(this.plan.modelOverride ? { 'x-openclaw-model': this.plan.modelOverride } : {}),
    };
    const send = url.protocol === 'https:' ? httpsRequest : request;
    return new Promise((resolve, reject) => {
      const req = send(url, { method: 'POST', headers, agent: false, signal: this.controller.signal }, resolve);
      req.on('error', (err) => reject(this.aborted ? err : Object.assign(new Error(`The runtimea gateway could not be reached at ${endpoint.url}: ${err.message}`), { code: (err as NodeJS.ErrnoException).code })));
      req.end(body);
    });
  }

  private async consume(response: IncomingMessage): Promise<{ done: boolean; error?: string; usage?: TurnUsage; runId?: string }> {
    const splitter = new SseDataSplitter();
    const outcome: { done: boolean; error?: string; usage?: TurnUsage; runId?: string } = { done: false };
    response.setEncoding('utf8');
    try {
      for await (const chunk of response as AsyncIterable<string>) {
        for (const data of splitter.push(chunk)) {
          for (const piece of parseChatData(data)) {
            if (piece.kind === 'text') this.emit({ type: 'text', text: piece.text });
            else if (piece.kind === 'usage') outcome.usage = piece.usage;
            else if (piece.kind === 'error') outcome.error = piece.message;
            else if (piece.kind === 'run') outcome.runId ??= piece.id;
            else if (piece.kind === 'done') outcome.done = true;
          }
        }
      }
    } catch {
      // a cut connection (gateway gone, or our own abort): `done` stays false
    }
    return outcome;
  }

  /** Polls the store for the new session's row, up to ROW_WAIT_MS after the request went out. */
  private async pollRow(): Promise<void> {
    const deadline = Date.now() + (this.deps.rowWaitMs ?? ROW_WAIT_MS);
    while (!this.resolved && Date.now() < deadline) {
      const id = await this.lookup();
      if (id) return this.resolveSession(id);
      await new Promise((r) => setTimeout(r, ROW_POLL_MS));
    }
    if (!this.resolved) {
      this.emitNow({ type: 'notice', message: `The gateway did not record the session within ${Math.round((this.deps.rowWaitMs ?? ROW_WAIT_MS) / 1000)} s; its id is not known yet.` });
      await this.resolveSession(undefined);
    }
  }

  private async lookup(): Promise<string | undefined> {
    return (await this.deps.store.byKey(this.plan.agent, this.plan.sessionKey).catch(() => undefined))?.sessionId;
  }

  private async resolveSession(id: string | undefined): Promise<void> {
    if (this.resolved) return;
    this.resolved = true;
    this.sessionId = id;
    if (id) this.emitNow(sessionEvent(id));
    for (const event of this.held.splice(0)) this.emitNow(event);
    for (const waiter of this.sessionWaiters.splice(0)) waiter(id ?? null);
  }

  private emit(event: RuntimeEvent): void {
    if (this.resolved) this.emitNow(event);
    else this.held.push(event);
  }

  private emitNow(event: RuntimeEvent): void {
    this.queue.push(event.type === 'text' && this.sessionId ? { ...event, sessionId: this.sessionId } : event);
  }

  /**
   * The session's transcript, read once per turn: when the usage needs the run's details
   * (`forUsage`, the session id known when the stream ended) or the project gets a copy.
   */
  private async transcript(forUsage: string | undefined): Promise<string | undefined> {
    const sessionId = forUsage ?? (this.plan.projectId || this.plan.attachments?.length ? this.sessionId : undefined);
    if (!sessionId) return undefined;
    return this.deps.store.transcript(this.plan.agent, sessionId).catch(() => undefined);
  }

  /** The transcript copied into the project and the session in its sessionslist.json. */
  private async record(jsonl: string | undefined): Promise<void> {
    const { plan, deps } = this;
    if (!this.sessionId || !plan.projectId) return;
    try {
      if (jsonl) await copyTranscript(deps.projectsRoot, plan.projectId, this.sessionId, jsonl);
    } catch (err) {
      deps.log.error({ err: String(err), sessionId: this.sessionId }, 'runtimea: copying the transcript into the project failed');
    }
    await recordInProject(deps, { agentName: 'runtimea', agentId: plan.projectId, sessionId: this.sessionId, title: plan.title, directory: path.join(deps.projectsRoot, plan.projectId) });
  }

  /** The prompt's attachments, kept against the gateway's user record of it (what /api/messages shows). */
  private async recordAttachments(jsonl: string | undefined): Promise<void> {
    const { plan, deps } = this;
    const attachments = plan.attachments ?? [];
    if (!this.sessionId || !jsonl || this.sentAt === undefined || attachments.length === 0) return;
    const messageId = userRecordId(jsonl, this.sentAt, withFileNames(plan.text, attachments));
    if (!messageId) {
      deps.log.warn({ sessionId: this.sessionId }, 'runtimea: the prompt\'s user record was not found in the gateway transcript; its attachments are not listed');
      return;
    }
    await deps.sentAttachments.record(this.sessionId, messageId, attachmentRecords(attachments) ?? []).catch((err: unknown) => {
      deps.log.error({ err: String(err), sessionId: this.sessionId }, 'runtimea: recording the attachments sent failed');
    });
  }
}

/** The LLM's name and the run's cost, from the gateway's transcript of the run. */
function withRunDetails(usage: TurnUsage, details: RunDetails): TurnUsage {
  return { ...usage, ...(details.model ? { model: details.model } : {}), ...(details.costUsd !== undefined ? { costUsd: details.costUsd } : {}) };
}

async function readBody(response: IncomingMessage): Promise<string> {
  let text = '';
  response.setEncoding('utf8');
  for await (const chunk of response as AsyncIterable<string>) if (text.length < 64 * 1024) text += chunk;
  return text;
}

/**
 * The user message's content: the text (naming non-image files by path), or with images the
 * chat endpoint's parts, each image an `image_url` data URL (the gateway takes data URLs;
 * remote URLs are off by default).
 */
async function userContent(text: string, attachments: readonly Attachment[] | undefined): Promise<unknown> {
  const prompt = withFileNames(text, attachments);
  const images = (attachments ?? []).filter((a) => a.kind === 'image');
  if (images.length === 0) return prompt;
  const parts: unknown[] = [{ type: 'text', text: prompt }];
  for (const image of images) parts.push({ type: 'image_url', image_url: { url: `data:${image.mime};base64,${(await readFile(image.path)).toString('base64')}` } });
  return parts;
}

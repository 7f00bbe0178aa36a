import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Core } from '../../core.js';
import { activeEnvFile } from '../../secrets/active-env.js';
import { childEnv, fillArgs, readEnvValues, type Binding } from '../binding.js';
import { startCliProcess, type CliProcess } from '../cli-process.js';
import type { CliSessionStore } from '../cli-session-store.js';
import type { LineAppender } from '../line-appender.js';
import { CliTurnBooks, sessionEvent } from '../turn-books.js';
import { attachmentRecords } from '../attachments.js';
import type { Approvals, Attachment, PermissionMode, RuntimeEvent } from '../runtime.js';
import { toolTitle } from '../tool-title.js';
import { answerCanUseTool, isControlLine, userMessage } from './control.js';
import { outcomeOf } from './outcome.js';
import { CliaParser } from './parser.js';
import type { CliaForkOf } from './fork.js';
import type { CliaTurnInput } from './turn-input.js';
import { userContent, type UserContent } from './user-content.js';

/** Everything one clia turn needs, fixed at prompt time. */
export interface CliaTurnPlan {
  ctx: Core;
  store: CliSessionStore;
  binding: Binding;
  sessionId: string;
  agentId: string;
  isNew: boolean;
  /** Where the CLI runs when not in the project's folder: a terminal session's own directory. */
  cwd?: string;
  nativeSessionId: string;
  /** The text sent to the CLI (skill prefix included). */
  prompt: string;
  title: string;
  permissionMode: PermissionMode;
  attachments?: readonly Attachment[];
  /** The turn's stdin for a steer (open while the CLI runs the turn). */
  input: CliaTurnInput;
  /** A fork's first turn: the CLI forks the original conversation into this session's native id. */
  forkOf?: CliaForkOf;
}

type Attempt = 'ended' | 'session-not-found';

/**
 * Runs one turn: records it, starts `claude` in ~/space-projects/<agent_id>/, streams its
 * stdout into the transcript (verbatim) and into neutral events, and ends with exactly one
 * `done` or `error`. A resume whose native session the CLI no longer has is run again as a
 * fresh native session under the same service session id, with a notice saying so.
 */
export async function* runCliaTurn(plan: CliaTurnPlan, signal: AbortSignal, approvals?: Approvals): AsyncGenerator<RuntimeEvent> {
  const { ctx, store } = plan;
  const cwd = plan.cwd ?? path.join(ctx.config.projectsRoot, plan.agentId);
  let env: Record<string, string>;
  let content: UserContent;
  try {
    // A terminal session's directory is the user's own: checked to exist, never made.
    if (!plan.cwd) await mkdir(cwd, { recursive: true });
    env = childEnv(plan.binding, ctx.config.childEnv, await readEnvValues(await activeEnvFile(ctx.config)));
    content = await userContent(plan.prompt, plan.attachments);
  } catch (err) {
    yield { type: 'error', message: (err as Error).message };
    return;
  }
  const books = new CliTurnBooks({ store, projectsRoot: ctx.config.projectsRoot, log: ctx.log }, { agentName: 'clia_code', agentId: plan.agentId, sessionId: plan.sessionId, title: plan.title, directory: cwd });
  const { transcript } = books;
  let native = plan.nativeSessionId;
  await record(plan, books, { nativeSessionId: native, start: true });
  transcript.add(userLine(plan.prompt, native, plan.attachments));
  // A session the client is told about is on disk first: a crash right after cannot lose it.
  await transcript.flush();
  if (plan.isNew) yield sessionEvent(plan.sessionId);
  try {
    let resume = !plan.isNew;
    const args = (): string[] => argsOf(plan, resume, native);
    const run = { content, env, cwd, signal, transcript, approvals, native: () => native };
    if ((yield* attempt(plan, args(), run, resume)) === 'session-not-found') {
      native = randomUUID();
      resume = false;
      await record(plan, books, { nativeSessionId: native, start: false });
      yield { type: 'notice', message: 'Claude Code no longer had this conversation, so this turn started a new one; earlier messages stay in this session but the agent does not remember them.' };
      yield* attempt(plan, args(), run, resume);
    }
  } finally {
    await books.close({ nativeSessionId: native, ...(plan.forkOf ? { forkOf: null } : {}) });
  }
}

/** What one attempt of a turn runs with. */
interface AttemptRun {
  content: UserContent;
  env: Record<string, string>;
  cwd: string;
  signal: AbortSignal;
  transcript: LineAppender;
  approvals: Approvals | undefined;
  native(): string;
}

async function* attempt(plan: CliaTurnPlan, args: string[], run: AttemptRun, resume: boolean): AsyncGenerator<RuntimeEvent, Attempt> {
  const { env, cwd, signal, transcript, approvals } = run;
  if (signal.aborted) {
    yield { type: 'done', finishReason: 'aborted' };
    return 'ended';
  }
  let proc: CliProcess;
  try {
    const onDroppedLine = (bytes: number): void => plan.ctx.log.warn({ bytes, session: plan.sessionId }, 'clia output line over the size limit dropped');
    proc = await startCliProcess(plan.ctx.supervisor, { command: plan.ctx.config.bins.clia, args, cwd, env, onDroppedLine, stdin: true });
  } catch (err) {
    yield { type: 'error', message: startFailure(err as NodeJS.ErrnoException, plan.ctx.config.bins.clia) };
    return 'ended';
  }
  const onAbort = (): void => proc.interrupt(plan.ctx.config.chat.abortGraceMs);
  signal.addEventListener('abort', onAbort, { once: true });
  const parser = new CliaParser();
  // stdin stays open until the result: the CLI's permission questions are answered on it, and a steer written.
  proc.write(userMessage(run.content));
  const { input } = plan;
  const openInput = (): void =>
    input.open({
      write: (line) => proc.write(line),
      record: (steer) => transcript.add(userLine(steer.text, run.native(), steer.attachments)),
    });
  // A resume's lines wait until `init` shows the CLI found the session; a miss is not recorded.
  const held: string[] = [];
  let ended = false;
  try {
    for await (const line of proc.lines) {
      const events = parser.push(line);
      for (const ask of parser.takeAsks()) answerCanUseTool(ask, approvals, cwd, (reply) => proc.write(reply));
      // A steer is taken once `init` shows the session was found, until the first result.
      if (parser.sawInit && !parser.result && !input.isOpen && !ended) openInput();
      if (parser.result) {
        input.close();
        proc.endInput();
      }
      if (isControlLine(line)) continue;
      if (resume && !parser.sawInit) held.push(line);
      else transcript.add(...held.splice(0), line);
      for (const event of events) yield event.type === 'tool-call' ? { ...event, title: toolTitle(event.name, event.input, cwd) } : event;
      // After a steer the CLI may answer it as one more turn before it exits: the end is then its exit.
      if (parser.result && !ended && input.steered === 0 && !(resume && !parser.sawInit && parser.result.sessionNotFound && !signal.aborted)) {
        ended = true;
        // Written before `done`, so a client that reloads the messages right away sees the answer.
        await transcript.flush();
        yield outcomeOf({ aborted: signal.aborted, result: parser.result, stderr: proc.stderrTail() });
      }
    }
    const exit = await proc.exited;
    const notFound = resume && !parser.sawInit && !signal.aborted && (parser.result?.sessionNotFound || /No conversation found with session ID/.test(proc.stderrTail()));
    if (!ended && notFound) return 'session-not-found';
    transcript.add(...held);
    await transcript.flush();
    if (!ended) yield outcomeOf({ aborted: signal.aborted, result: parser.result, exit, stderr: proc.stderrTail() });
    return 'ended';
  } finally {
    input.close();
    signal.removeEventListener('abort', onAbort);
    await proc.stop();
  }
}

/**
 * The CLI's arguments: the manifest's templates, their `-- {prompt}` tail replaced by the
 * stream-json input flag (the prompt goes on stdin) and the permission mode's flags.
 */
function argsOf(plan: CliaTurnPlan, resume: boolean, native: string): string[] {
  const { binding } = plan;
  const template = resume ? (binding.resume_args ?? binding.args) : binding.args;
  const end = template.indexOf('--');
  const modeArgs = plan.permissionMode === 'auto' ? [] : binding.permission_mode_args?.[plan.permissionMode];
  if (!binding.stream_input_args || !modeArgs) throw new Error(`The clia_code manifest has no arguments for permission_mode ${plan.permissionMode}`);
  const fork = resume ? plan.forkOf : undefined;
  const forkArgs = fork ? ['--fork-session', '--session-id', native, ...(fork.at ? ['--resume-session-at', fork.at] : [])] : [];
  return [...fillArgs([...(end === -1 ? template : template.slice(0, end)), ...binding.stream_input_args, ...modeArgs], { session_id: fork ? fork.nativeSessionId : native }), ...forkArgs];
}

/** The index entry (made at the session's first turn) and the per-project index. */
function record(plan: CliaTurnPlan, books: CliTurnBooks, at: { nativeSessionId: string; start: boolean }): Promise<void> {
  const now = Date.now();
  const cwd = books.owner.directory;
  const created = plan.isNew && at.start;
  return books.record({ nativeSessionId: at.nativeSessionId, updatedAt: now, ...(created ? { title: plan.title, directory: cwd, directoryHistory: [{ directory: cwd, selectedAt: now }] } : {}) });
}

/**
 * The prompt in the shape the CLI echoes a user message (`--replay-user-messages`), without
 * `isReplay`: this line is the record of the prompt, and readers skip the CLI's own echoes.
 */
function userLine(prompt: string, nativeSessionId: string, attachments: readonly Attachment[] | undefined): string {
  const records = attachmentRecords(attachments);
  return JSON.stringify({
    type: 'user',
    message: { role: 'user', content: prompt },
    // The service's own field: what /api/messages shows of the attachments, never their bytes.
    ...(records ? { attachments: records } : {}),
    session_id: nativeSessionId,
    parent_tool_use_id: null,
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
  });
}

function startFailure(err: NodeJS.ErrnoException, command: string): string {
  if (err.code === 'ENOENT') return `Claude Code CLI not found: "${command}" is not installed or not on PATH (set SPACE_CLIA_BIN)`;
  if (err.code === 'EACCES') return `Claude Code CLI cannot be run: "${command}" is not executable`;
  return `Claude Code CLI could not be started: ${err.message}`;
}

// A double of `codex app-server` (codex 0.169.0) that replays the transcripts recorded from
// the real program (test/fixtures/clib/app-server/*.transcript.txt) with their real gaps
// (`emittedAtMs` differences). For each request the client sends, it finds the next recorded
// client line with that method in the chosen recording and replays what codex wrote after it,
// with the request id, the thread id and (on resume) the thread's recorded id rewritten.
//
// The recording for turn/start is picked by a marker in the prompt:
//   [[shell]] tool-shell   [[401]] err-401   [[500]] err-500   [[slow]] interrupt (waits for
//   turn/interrupt)   [[silence]] slow-22s   [[crash]] new-text, SIGKILLed after two text deltas
//   otherwise new-text (new thread) or resume-text (resumed thread).
// thread/resume of a thread this fake never started replays resume-unknown-thread.
// Every request, with argv, cwd and whether CODEX_API_KEY was set, is logged as JSON lines to
// $HOME/fake-codex.log.jsonl so tests can check what the adapter sent.
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, '..', '..', 'fixtures', 'clib', 'app-server');
const home = process.env.HOME ?? '/tmp';
const logFile = path.join(home, 'fake-codex.log.jsonl');
const codexHome = process.env.CODEX_HOME ?? path.join(home, '.codex');
const threadsFile = path.join(codexHome, 'fake-threads.json');

const log = (entry) => appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
log({ argv: process.argv.slice(2), cwd: process.cwd(), apiKey: process.env.CODEX_API_KEY ?? null, codexHome: process.env.CODEX_HOME ?? null, spaceVars: Object.keys(process.env).filter((k) => k.startsWith('SPACE_')) });

if (process.argv[2] !== 'app-server') {
  process.stderr.write(`fake codex: only app-server is replayed, got ${process.argv.slice(2).join(' ')}\n`);
  process.exit(2);
}

/** A recording: client lines (`>> `) and what codex wrote after each. */
function load(name) {
  const lines = readFileSync(path.join(fixtures, `${name}.transcript.txt`), 'utf8').split('\n').filter(Boolean);
  return lines.map((line) => (line.startsWith('>> ') ? { client: JSON.parse(line.slice(3)) } : { server: line }));
}

function recordedThreadId(recording) {
  for (const entry of recording) {
    const m = entry.server && /"thread":\{"id":"([^"]+)"/.exec(entry.server);
    if (m) return m[1];
  }
  const resume = recording.find((e) => e.client?.method === 'thread/resume');
  return resume?.client.params.threadId;
}

function knownThreads() {
  return existsSync(threadsFile) ? JSON.parse(readFileSync(threadsFile, 'utf8')) : [];
}

function remember(threadId) {
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(threadsFile, JSON.stringify([...knownThreads(), threadId]));
}

let threadId;
let resumed = false;
let queue = Promise.resolve();
let interruptWaiter;
let deaf = false;

function scenarioFor(text) {
  if (text.includes('[[shell]]')) return 'tool-shell';
  if (text.includes('[[401]]')) return 'err-401';
  if (text.includes('[[500]]')) return 'err-500';
  if (text.includes('[[slow]]') || text.includes('[[deaf]]')) return 'interrupt';
  if (text.includes('[[silence]]')) return 'slow-22s';
  if (text.includes('[[crash]]')) return 'crash';
  return resumed ? 'resume-text' : 'new-text';
}

/** Replays what `recording` shows codex writing after its next `method` request. */
async function replay(recording, method, request, rewrite, options = {}) {
  const at = recording.findIndex((e) => e.client?.method === method);
  if (at === -1) return;
  const recordedId = recording[at].client.id;
  let previous;
  let deltas = 0;
  for (let i = at + 1; i < recording.length; i++) {
    const entry = recording[i];
    if (entry.client) {
      if (entry.client.method !== 'turn/interrupt') break;
      await new Promise((resolve) => (interruptWaiter = resolve));
      continue;
    }
    let line = entry.server;
    const msg = JSON.parse(line);
    if (msg.emittedAtMs !== undefined) {
      if (previous !== undefined) await sleep(Math.max(0, msg.emittedAtMs - previous));
      previous = msg.emittedAtMs;
    }
    if (msg.id !== undefined && !msg.method) {
      if (msg.id === recordedId) line = JSON.stringify({ ...msg, id: request.id });
      else continue; // the answer to another request (e.g. turn/interrupt) is sent when that request comes
    }
    process.stdout.write(`${rewrite(line)}\n`);
    if (msg.method === 'item/agentMessage/delta') deltas++;
    if (options.crashAfterDeltas && deltas >= options.crashAfterDeltas) process.kill(process.pid, 'SIGKILL');
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function handle(request) {
  log({ request });
  const newText = load('new-text');
  switch (request.method) {
    case 'initialize':
      return replay(newText, 'initialize', request, (l) => l);
    case 'thread/start': {
      const recorded = recordedThreadId(newText);
      threadId = randomUUID();
      remember(threadId);
      return replay(newText, 'thread/start', request, (l) => l.split(recorded).join(threadId));
    }
    case 'thread/resume': {
      const wanted = request.params.threadId;
      if (!knownThreads().includes(wanted)) {
        const unknown = load('resume-unknown-thread');
        return replay(unknown, 'thread/resume', request, (l) => l.split(recordedThreadId(unknown)).join(wanted));
      }
      threadId = wanted;
      resumed = true;
      const recording = load('resume-text');
      return replay(recording, 'thread/resume', request, (l) => l.split(recordedThreadId(recording)).join(threadId));
    }
    case 'turn/start': {
      const text = request.params.input.map((i) => i.text ?? '').join('');
      const scenario = scenarioFor(text);
      deaf = text.includes('[[deaf]]');
      const recording = load(scenario === 'crash' ? 'new-text' : scenario);
      const recorded = recordedThreadId(recording);
      return replay(recording, 'turn/start', request, (l) => l.split(recorded).join(threadId), scenario === 'crash' ? { crashAfterDeltas: 2 } : {});
    }
    case 'turn/interrupt':
      process.stdout.write(`${JSON.stringify({ id: request.id, result: {} })}\n`);
      if (!deaf) interruptWaiter?.();
      return undefined;
    default:
      if (request.id !== undefined) process.stdout.write(`${JSON.stringify({ id: request.id, error: { code: -32601, message: `fake codex: ${request.method} not recorded` } })}\n`);
      return undefined;
  }
}

const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  // turn/interrupt must not wait behind the turn it interrupts.
  if (request.method === 'turn/interrupt') handle(request);
  else queue = queue.then(() => handle(request));
});
input.on('close', () => void queue.then(() => process.exit(0)));

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { HttpError } from '../errors.js';
import { AGENT_NAMES, type AgentName } from '../ids.js';

/**
 * The per-backend manifests shipped with the service, config/agents/<backend>/commands.json:
 * the backend's models and skills, and the binding of the neutral runtime name to its real
 * program (command, argument templates, wire protocol, and which env-file variable feeds which
 * variable the program reads). No endpoint modifies them.
 */
/** The manifests' backends are the spec's agent names. */
export const BACKENDS = AGENT_NAMES;
export type Backend = AgentName;

const Model = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  provider: z.string().min(1),
  context: z.number().int().positive(),
  supports_streaming: z.boolean(),
  supports_tools: z.boolean(),
});

const Skill = z.object({ name: z.string().min(1), description: z.string() });

const Binding = z.object({
  /** The real program's default binary name (SPACE_*_BIN overrides it at run time). */
  command: z.string().min(1),
  package: z.string().min(1),
  /** The version the research verified the protocol on. */
  version: z.string().min(1),
  protocol: z.string().min(1),
  /** What the program's stdin carries: nothing, the prompt, or a JSON-RPC session (app-server). */
  stdin: z.enum(['ignore', 'prompt', 'jsonrpc']),
  /** Argument templates; `{prompt}`, `{session_id}`, `{cwd}`, `{model}`, `{port}` are filled in. */
  args: z.array(z.string()),
  resume_args: z.array(z.string()).optional(),
  model_args: z.array(z.string()).optional(),
  /** Replaces the `-- {prompt}` tail of `args` when the prompt goes on stdin as a protocol message. */
  stream_input_args: z.array(z.string()).optional(),
  /** Extra arguments per permission mode other than `auto` (docs/approvals.md). */
  permission_mode_args: z.record(z.string(), z.array(z.string())).optional(),
  /** Env-file variable -> the variable the program reads. */
  env: z.record(z.string(), z.string()),
  /** Fixed variables for every run of the program. */
  env_defaults: z.record(z.string(), z.string()).default({}),
  /** How a skill is invoked in the prompt text (`/name`, `$name`). */
  skill_prefix: z.string().optional(),
});

const Manifest = z.object({
  backend: z.enum(BACKENDS),
  display_name: z.string(),
  binding: Binding,
  default_model: z.string().optional(),
  models: z.array(Model),
  skills: z.array(Skill),
  sources: z.array(z.string()).optional(),
});

export type Manifest = z.infer<typeof Manifest>;
export type Model = z.infer<typeof Model>;

export async function loadManifest(dir: string, backend: Backend): Promise<Manifest> {
  const file = path.join(dir, backend, 'commands.json');
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new HttpError(500, `Manifest ${file} cannot be read: ${(err as Error).message}`);
  }
  const parsed = Manifest.safeParse(raw);
  if (!parsed.success || parsed.data.backend !== backend) throw new HttpError(500, `Manifest ${file} is not valid`);
  return parsed.data;
}

/** Every backend's manifest, in BACKENDS order. Read per call: they are three small files. */
export function loadManifests(dir: string): Promise<Manifest[]> {
  return Promise.all(BACKENDS.map((backend) => loadManifest(dir, backend)));
}

/** GET /api/models: every backend's models; `backend` says which runtime serves each. */
export async function listModels(dir: string): Promise<Array<Model & { backend: Backend }>> {
  const manifests = await loadManifests(dir);
  return manifests.flatMap((m) => m.models.map((model) => ({ ...model, backend: m.backend })));
}

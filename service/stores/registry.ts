import { randomUUID } from 'node:crypto';
import { HttpError } from '../errors.js';
import { JsonFile } from './json-file.js';

/**
 * The runtimea agent registry, ~/.runtimea/runtimea.json: `{agents: [...]}`. `id` and `name`
 * are the only enforced fields; anything else is stored as given. Every write is a locked
 * read-merge-write (JsonFile.update), so concurrent requests never drop each other's agents,
 * and a file that does not parse is reported (500) and never replaced.
 */
export interface Agent {
  id: string;
  name: string;
  created_at?: string;
  [field: string]: unknown;
}

export interface Registry {
  agents: Agent[];
  [field: string]: unknown;
}

/** Request fields; `id` is generated when absent, `created_at` is the server's. */
export type AgentFields = Record<string, unknown>;

export class RegistryStore {
  private readonly json: JsonFile<Registry>;

  constructor(
    readonly file: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.json = new JsonFile<Registry>(file, () => ({ agents: [] }), { mode: 0o600, dirMode: 0o700, parentMode: 0o700 });
  }

  /** The whole document, shape-checked. */
  async read(): Promise<Registry> {
    return this.checked(await this.json.read());
  }

  async list(): Promise<Agent[]> {
    return (await this.read()).agents;
  }

  /** The agent, or undefined: for lookups where absence is not an error. */
  async find(id: string): Promise<Agent | undefined> {
    return (await this.list()).find((a) => isAgent(a) && a.id === id);
  }

  async get(id: string): Promise<Agent> {
    const agent = await this.find(id);
    if (!agent) throw new HttpError(404, 'Agent not found');
    return agent;
  }

  /** POST: merge into the agent with that id, or append a new one. */
  upsert(fields: AgentFields & { name: string; id?: string }): Promise<Agent> {
    const id = fields.id ?? randomUUID();
    return this.update((registry) => {
      const index = registry.agents.findIndex((a) => isAgent(a) && a.id === id);
      const current = registry.agents[index];
      const agent = current
        ? merge(current, fields)
        : merge({ id, name: fields.name }, fields, { created_at: this.now().toISOString() });
      if (current) registry.agents[index] = agent;
      else registry.agents.push(agent);
      return agent;
    });
  }

  /** PATCH: shallow merge into an existing agent. */
  patch(id: string, fields: AgentFields): Promise<Agent> {
    return this.update((registry) => {
      const index = registry.agents.findIndex((a) => isAgent(a) && a.id === id);
      const current = registry.agents[index];
      if (!current) throw new HttpError(404, 'Agent not found');
      const agent = merge(current, fields);
      registry.agents[index] = agent;
      return agent;
    });
  }

  private async update(change: (registry: Registry) => Agent): Promise<Agent> {
    const agent = await this.json.update((current) => {
      const registry = this.checked(current);
      return { next: registry, result: change(registry) };
    });
    return agent;
  }

  private checked(value: unknown): Registry {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw this.corrupt();
    const registry = value as Partial<Registry>;
    if (registry.agents === undefined) return { ...registry, agents: [] };
    if (!Array.isArray(registry.agents)) throw this.corrupt();
    return registry as Registry;
  }

  private corrupt(): HttpError {
    return new HttpError(500, `${this.file} is not a registry ({"agents": [...]}); fix or remove it (it was left untouched)`);
  }
}

/**
 * Shallow merge over own keys only, so a `__proto__` field can never reach a prototype.
 * `id` and `created_at` are the record's own: a body cannot move or re-date an agent.
 */
function merge(base: Agent, fields: AgentFields, server: Partial<Agent> = {}): Agent {
  const next: Record<string, unknown> = Object.fromEntries(Object.entries(base));
  for (const [key, value] of Object.entries(fields)) {
    if (key === '__proto__' || key === 'id' || key === 'created_at') continue;
    next[key] = value;
  }
  for (const [key, value] of Object.entries(server)) next[key] = value;
  return next as Agent;
}

function isAgent(value: unknown): value is Agent {
  return typeof value === 'object' && value !== null && typeof (value as Agent).id === 'string';
}

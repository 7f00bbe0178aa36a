import type { Manifest } from './manifests.js';
import type { Env } from '../config.js';
import { EnvFileStore } from '../stores/env-file.js';

/**
 * A manifest's binding of a neutral runtime to its real program, applied: argument
 * templates filled in, and the child's environment built from the service's own plus the
 * active env file's credentials under the names the program reads.
 */
export type Binding = Manifest['binding'];

/** Fills `{name}` placeholders; an argument that is exactly a placeholder stays one argument. */
export function fillArgs(templates: readonly string[], values: Readonly<Record<string, string>>): string[] {
  return templates.map((t) => t.replace(/\{([a-z_]+)\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? values[name]! : whole)));
}

/**
 * The child's environment: the service's (config.childEnv), then the binding's fixed
 * defaults where not already set, then every mapped credential that the env file holds
 * (the env file wins: it is where the user keeps them). One pair of matching quotes around
 * a value is dropped, as dotenv does, since the spec's reader keeps them.
 */
export function childEnv(binding: Binding, base: Env, envFile: ReadonlyMap<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(binding.env_defaults)) env[k] ??= v;
  for (const [from, to] of Object.entries(binding.env)) {
    const value = envFile.get(from);
    if (value) env[to] = unquote(value);
  }
  return env;
}

/** The last value of each key of an env file (dotenv's last one wins); empty when it is missing. */
export async function readEnvValues(file: string): Promise<Map<string, string>> {
  return new Map((await new EnvFileStore(file).entries()).map((e) => [e.key, e.value]));
}

function unquote(value: string): string {
  const m = /^(["'])(.*)\1$/s.exec(value);
  return m ? m[2]! : value;
}

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomically } from '../stores/atomic.js';

/** The spec's "Project metadata file", <project>/.space/project.json. */
export interface ProjectFile {
  $schema: string;
  schema: 1;
  _template: boolean;
  name: string;
  display_name: string;
  description: string;
  created_at: string;
  [extra: string]: unknown;
}

export const PROJECT_SCHEMA_REF = './project.schema.json';

/**
 * Reads the project.json the template put there (or starts from nothing) and writes it
 * back with this project's identity. Keys the template adds beyond the spec's are kept.
 */
export async function writeProjectFile(
  dir: string,
  seed: { name: string; displayName: string; description: string },
): Promise<ProjectFile> {
  const file = path.join(dir, '.space', 'project.json');
  const existing = await readObject(file);
  const project: ProjectFile = {
    $schema: typeof existing.$schema === 'string' && existing.$schema ? existing.$schema : PROJECT_SCHEMA_REF,
    schema: 1,
    _template: true,
    name: seed.name,
    display_name: seed.displayName,
    description: seed.description,
    created_at: new Date().toISOString(),
  };
  for (const [key, value] of Object.entries(existing)) {
    if (!Object.hasOwn(project, key) && key !== '__proto__') project[key] = value;
  }
  await writeFileAtomically(file, `${JSON.stringify(project, null, 2)}\n`);
  return project;
}

async function readObject(file: string): Promise<Record<string, unknown>> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

import { HttpError } from '../errors.js';

const MAX_NAME_LENGTH = 64;

/**
 * The normalized project id of a scaffold target: accents dropped, lowercased, every run
 * of other characters turned into one dash, no leading or trailing dash, at most 64
 * characters. "Été 2025 / Q3 plan" becomes "ete-2025-q3-plan". ASCII only, so the id is
 * safe as a folder name and as an id elsewhere.
 */
export function normalizeProjectName(raw: string): string {
  const name = raw
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, MAX_NAME_LENGTH)
    .replace(/-+$/, '');
  if (!name) throw new HttpError(400, 'Project name must contain a letter or a digit');
  return name;
}

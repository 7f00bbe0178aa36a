import { HttpError } from '../../errors.js';
import { checkBearer } from '../bearer-check.js';

/**
 * The code host's REST API (GitHub's): `GET {api}/user` with the headers GitHub asks for
 * (a User-Agent is required; the API version is pinned), answering `{login, id}`.
 */
export interface CodehostUser {
  login: string;
  id: number;
  [field: string]: unknown;
}

export async function codehostUser(apiUrl: string, token: string, userAgent: string): Promise<CodehostUser> {
  const body = await checkBearer({
    url: `${apiUrl}/user`,
    token,
    label: 'The code host',
    headers: { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28', 'User-Agent': userAgent },
  });
  if (typeof body.login !== 'string' || typeof body.id !== 'number') throw new HttpError(502, 'The code host answered /user without a login and id');
  return { login: body.login, id: body.id };
}

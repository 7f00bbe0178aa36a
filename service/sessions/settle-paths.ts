import path from 'node:path';
import { TERMINAL_SOURCES } from './fold.js';
import type { SessionView } from './merge.js';

/** What settling a listed session re-reads now (SessionIndex.settleSession): its index entries and log. */
export function settlePaths(view: SessionView): string[] {
  // A store's log seen before its index entry (an orphan) is listed from its folder, whose
  // index is then read too: the entry may have been written since.
  const paths = view.records.flatMap((r) => (r.indexFile ? [r.indexFile] : r.log?.kind === 'file' && !TERMINAL_SOURCES.has(r.source) ? [path.dirname(r.log.path)] : []));
  if (view.log) paths.push(view.log.kind === 'sqlite' ? view.log.db : view.log.path);
  // An entry read before its log was written (a fork writes its entry first): the log is
  // beside the entry's index, so that folder is listed (the watcher may bring it only later).
  else paths.push(...view.records.flatMap((r) => (r.indexFile ? [path.dirname(r.indexFile)] : [])));
  return paths;
}

import { historySettingFile } from '../config-values.js';
import { JsonFile } from './json-file.js';

export { historySettingFile, savedHistorySetting } from '../config-values.js';

/**
 * The user's choice to read their terminal history or not (docs/history.md), as the config
 * API sets it: `~/.space-state/history.json` `{enabled}`. Read once at start-up (the session
 * index's folders are fixed then): a change applies at the next start. SPACE_HISTORY, when
 * set, wins over it.
 */
export function saveHistorySetting(home: string, enabled: boolean): Promise<void> {
  return new JsonFile<{ enabled?: boolean }>(historySettingFile(home), () => ({})).update((doc) => ({ next: { ...doc, enabled }, result: undefined }));
}

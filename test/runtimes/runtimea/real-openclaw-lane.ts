import path from 'node:path';
import type { PermissionMode, RuntimeEvent } from '../../../service/runtimes/runtime.js';
import type { RuntimeaRuntime } from '../../../service/runtimes/runtimea/runtime.js';
import type { FakeChat } from '../../fakes/openai-chat.js';
import type { TestService } from '../../helpers/service.js';
import type { OnboardOptions } from '../../helpers/setups.js';

/** What the real OpenClaw lanes (real-openclaw*.test.ts) share: the keys, onboarding and a turn. */
export const KEY = 'sk-provb-real-openclaw';
export const USER_TOKEN = 'user-gateway-token-0123456789abcdef';

/**
 * How a lane onboards a service's state folder: with the programs it got from
 * realProgram('openclaw') and realProgram('node24') (called in the lane itself, which is what
 * makes it a lane for test/tools/lanes.mjs).
 */
export function onboarder(openclaw: string | undefined, node24: string | undefined) {
  return (svc: TestService, fake: FakeChat, extra: Partial<OnboardOptions> = {}): OnboardOptions => ({
    node: node24!,
    openclaw: openclaw!,
    home: svc.home,
    stateDir: path.join(svc.home, '.runtimea'),
    providerUrl: fake.url,
    apiKey: KEY,
    ...extra,
  });
}

/** The gateway's answer to a request with this bearer (its models list). */
export async function modelsWith(url: string, bearer: string): Promise<number> {
  return (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${bearer}` } })).status;
}

export async function turnOf(runtime: RuntimeaRuntime, text: string, permissionMode?: PermissionMode): Promise<RuntimeEvent[]> {
  const turn = await runtime.prepare({ text, ...(permissionMode ? { permissionMode } : {}) });
  const events: RuntimeEvent[] = [];
  for await (const event of turn.run(new AbortController().signal)) events.push(event);
  return events;
}

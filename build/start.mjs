#!/usr/bin/env node
/**
 * `npm start`: the build check (build/ensure-built.mjs), then the prebuilt service, in one
 * Node process (a second process for the check alone cost about 50 ms of every start).
 */
import { ensureBuilt } from './ensure-built.mjs';

await ensureBuilt();
await import('../dist/service/cli.js');

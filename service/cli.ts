#!/usr/bin/env node
import { main } from './headless.js';

/** `npm start` from the sources (tsx); the build replaces it by cached-start.ts (build/bundle.mjs). */
await main();

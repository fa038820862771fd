// Fuzz target: browser mode's HTTP API (profiler/serve/server.ts) with
// generated argument lists for every method (lib/api-input.ts), on real
// recordings. Property: lib/api-check.ts.
import { apiTarget } from '../lib/api-check.ts';

export const target = apiTarget('http');

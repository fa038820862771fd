// Fuzz target: the desktop app's IPC channels (app/ipc.ts dispatch in front
// of the real main-process API and query worker) with generated argument
// lists for every method (lib/api-input.ts), on real recordings. Property:
// lib/api-check.ts.
import { apiTarget } from '../lib/api-check.ts';

export const target = apiTarget('ipc');

// What an analysis looks at, as the CLI's flags, the API and the app name
// it: the steady state (start-up left out; the default), the whole
// recording, an NVTX range (all instances or the k-th from 1), or a time
// window (the user's selection on the ruler). ScopeInfo says what was
// resolved, with start-up as detected. analysis/scope.ts and
// analysis/startup.ts compute them.
import type { Scope } from './api-schema.ts';
import type { Ns } from './time.ts';

/**
 * `{kind: 'steady-state'} | {kind: 'whole'} | {kind: 'range', name,
 * instance?} | {kind: 'window', startNs, endNs}`: the type of the schema the
 * API checks a scope with (api-schema.ts), defined there once.
 */
export type { Scope };

export const STEADY_STATE: Scope = { kind: 'steady-state' };

/** What an analysis looked at, for reports, JSON and the app. */
export interface ScopeInfo {
  kind: Scope['kind'];
  /** One line: "steady state, after 957 ms of start-up", "NVTX range 'step' (12 instances)", … */
  label: string;
  /** The time covered: start-up's end to the end (steady state), the instances of a range, a window. */
  windows: { startNs: Ns; endNs: Ns }[];
  /** Start-up as detected, whatever the scope (null: none detected). */
  startup: Startup | null;
  /** For a range scope: its name, how many instances it has, which one was taken (absent: all). */
  range?: { name: string; instances: number; instance?: number };
  /**
   * Why this scope's findings may differ from the steady state's or the
   * other instances' (a range scope: start-up inside it, steady-state work
   * no instance owns, a warm-up instance; a window: operations it cut at
   * its edges, counted by their part inside), one sentence each; absent: none.
   */
  notes?: string[];
}

export interface StartupPart {
  what: 'context' | 'modules' | 'memory' | 'other-calls' | 'host';
  /** How a person reads it. */
  label: string;
  ns: Ns;
}

export interface Startup {
  /** From the first recorded call or operation … */
  startNs: Ns;
  /** … to the end of the last start-up call: where the steady state begins. */
  endNs: Ns;
  /** The call that ended it. */
  lastCall: string;
  /** What the time went to, longest first (parts add up to endNs − startNs). */
  spentOn: StartupPart[];
  /** Operations that ran during start-up (left out of the steady state). */
  ops: number;
  /**
   * Time from the recorder starting the process to CUDA initialising
   * (interpreter start, imports), which precedes the recording's origin;
   * null when the recording does not say.
   */
  beforeCudaNs: Ns | null;
}

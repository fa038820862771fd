// What the findings panel, the stats and the compare view analyse: a Scope
// of the API (profiler/analysis/scope.ts) — the steady state, the whole
// recording, an NVTX range (all instances or the k-th), or a window (the
// selection on the ruler). Here: its one-line text form, used as the URL
// value and as a key (two scopes are the same when their keys are), and
// its short name for the picker. Pure: no DOM, no API calls.
import type { Scope as ApiScope } from '../../../profiler/contract/api.ts';
import { formatDuration, toNs, type NsFields } from '../../../profiler/contract/time.ts';

/**
 * A scope as the page holds it and sends it to the API: a window's times
 * are BrandedNs (contract/time.ts), made in one place, windowScope. Every
 * page Scope is an API Scope; the pure functions below read either.
 */
export type Scope = NsFields<ApiScope>;

export const STEADY_STATE: Scope = { kind: 'steady-state' };

/**
 * `steady` · `whole` · `range:NAME` · `range:NAME#k` · `window:START..END`
 * (integer ns since the recording origin). A range name that itself ends
 * in `#<digits>` reads as an instance, as `streamscope report --range` reads it.
 */
export function scopeKey(s: ApiScope): string {
  switch (s.kind) {
    case 'steady-state':
      return 'steady';
    case 'whole':
      return 'whole';
    case 'range':
      return `range:${s.name}${s.instance !== undefined ? `#${s.instance}` : ''}`;
    case 'window':
      return `window:${s.startNs}..${s.endNs}`;
  }
}

/** scopeKey's inverse; anything it cannot read is the steady state (the default). */
export function parseScope(text: string | null | undefined): Scope {
  if (!text || text === 'steady') return STEADY_STATE;
  if (text === 'whole') return { kind: 'whole' };
  const w = /^window:(-?\d+)\.\.(-?\d+)$/.exec(text);
  if (w) return windowScope(Number(w[1]), Number(w[2])) ?? STEADY_STATE;
  if (text.startsWith('range:')) {
    const rest = text.slice('range:'.length);
    const m = /^(.+)#(\d+)$/.exec(rest);
    if (m && Number(m[2]) >= 1) return { kind: 'range', name: m[1]!, instance: Number(m[2]) };
    if (rest) return { kind: 'range', name: rest };
  }
  return STEADY_STATE;
}

export function sameScope(a: ApiScope, b: ApiScope): boolean {
  return scopeKey(a) === scopeKey(b);
}

/**
 * The window between two times (ns since the recording origin: a range
 * selected on the timeline, or read from the URL) in either order, on whole
 * nanoseconds (the API takes integers); null when it holds no time at all.
 */
export function windowScope(a: number, b: number): Scope | null {
  const startNs = Math.round(Math.min(a, b));
  const endNs = Math.round(Math.max(a, b));
  return endNs > startNs ? { kind: 'window', startNs: toNs(startNs), endNs: toNs(endNs) } : null;
}

/** How the picker names a scope. */
export function scopeTitle(s: ApiScope): string {
  switch (s.kind) {
    case 'steady-state':
      return 'Steady state';
    case 'whole':
      return 'Whole recording';
    case 'range':
      return s.instance !== undefined ? `${s.name} #${s.instance}` : `${s.name} (all instances)`;
    case 'window':
      return `Selection · ${formatDuration(s.endNs - s.startNs)}`;
  }
}

// Where each compared recording's time axis starts. Two runs of one program
// never start at the same moment after their recordings' origins (process
// start-up, module loading, JIT), so the compare view shifts each recording
// so that one chosen event sits at t = 0 in all of them: the first GPU
// operation (default), the n-th occurrence of a kernel or an NVTX range the
// user names, or an explicit offset. Pure: the view asks the API with
// anchorRequest and turns the answer into an anchor with anchorOf.
import type { ItemKind, SearchRequest, SearchResponse } from '../../../profiler/contract/api.ts';
import type { NsFields } from '../../../profiler/contract/time.ts';

export type Alignment = { by: 'first-gpu' } | { by: 'kernel' | 'nvtx'; name: string; occurrence: number } | { by: 'origin' };

export const GPU_KINDS: ItemKind[] = ['kernel', 'memcpy-h2d', 'memcpy-d2h', 'memcpy-d2d', 'memcpy-peer', 'memcpy-other', 'memset'];

/** The search that finds the anchor event of a recording, or null when none is needed. */
export function anchorRequest(a: Alignment): NsFields<SearchRequest> | null {
  switch (a.by) {
    case 'origin':
      return null;
    case 'first-gpu':
      return { text: '', kinds: GPU_KINDS, limit: 1 };
    // Search matches substrings; exact names are picked from the answer, so
    // enough matches must come back to reach the wanted occurrence of one.
    case 'kernel':
    case 'nvtx':
      return { text: a.name, kinds: [a.by], limit: Math.min(10_000, Math.max(1, a.occurrence) * 50) };
  }
}

/**
 * The anchor (ns since the recording's origin) in a search answer: the
 * first GPU operation, or the occurrence-th (1-based, in time order) item
 * whose name (stored or demangled) is exactly `name` — or, when no name matches exactly, that
 * occurrence among the names that contain it. Null when there is none
 * (the view says so and keeps the recording unshifted).
 */
export function anchorOf(a: Alignment, res: SearchResponse | null): number | null {
  if (a.by === 'origin') return 0;
  if (!res || res.items.length === 0) return null;
  if (a.by === 'first-gpu') return res.items[0]!.startNs;
  const exact = new Set(res.names.filter((n) => n.name === a.name || n.demangledName === a.name).map((n) => n.nameId));
  const items = exact.size > 0 ? res.items.filter((i) => exact.has(i.nameId)) : res.items;
  return items[Math.max(1, a.occurrence) - 1]?.startNs ?? null;
}

/** URL form: `first-gpu`, `origin`, `kernel:3:NAME`, `nvtx:1:NAME`. */
export function formatAlignment(a: Alignment): string {
  return a.by === 'kernel' || a.by === 'nvtx' ? `${a.by}:${a.occurrence}:${a.name}` : a.by;
}

export function parseAlignment(s: string | null | undefined): Alignment {
  if (s === 'origin') return { by: 'origin' };
  const m = /^(kernel|nvtx):(\d+):(.+)$/s.exec(s ?? '');
  if (m) return { by: m[1] as 'kernel' | 'nvtx', occurrence: Math.max(1, Number(m[2])), name: m[3]! };
  return { by: 'first-gpu' };
}

/**
 * A recording's shift: the view of recording i shows aligned time t at its
 * own time t + shift_i, where shift_i = anchor_i + extra offset_i. The base
 * recording (index 0) has no extra offset.
 */
export function shiftOf(anchor: number | null, offsetNs: number): number {
  return (anchor ?? 0) + offsetNs;
}

// The dependency view's answers (api.ts: dependencies(), waitSpans()): what
// a GPU operation waited for before it could start, what waited for it, and
// its critical chain back to the host call that made it possible.
// analysis/replay/dependencies.ts derives them from the what-if replay's graph and
// defines the times; docs/ANALYSIS.md ("Dependencies") says it in words.
import type { ItemRef } from './api-schema.ts';
import type { ItemKind } from './items.ts';
import type { Ns } from './time.ts';

/**
 * What a dependency is: `launch`, an API call → the operation it issued
 * (correlation id); `stream`, the previous operation of the same stream;
 * `event`, cudaEventRecord → cudaStreamWaitEvent (what PyTorch's
 * wait_stream and CuPy's events are underneath); `barrier`, the legacy
 * default stream's implicit synchronization; `sync`, a host call
 * (cudaStreamSynchronize, cudaEventSynchronize) that waited for an operation.
 */
export type DependencyKind = 'launch' | 'stream' | 'event' | 'barrier' | 'sync';

/** One end of a dependency, with what the timeline needs to draw it where the item is not loaded one by one. */
export interface DependencyEnd {
  ref: ItemRef;
  kind: ItemKind;
  /** The timeline row that draws it (api.ts RowId). */
  rowId: string;
  startNs: Ns;
  endNs: Ns;
  /** A kernel's or call's name as people read it (demangled); null for copies and memsets. */
  name: string | null;
}

export interface Dependency {
  kind: DependencyKind;
  /** What was waited for (a launch: the API call). */
  from: DependencyEnd;
  /** What waited (a sync: the API call). */
  to: DependencyEnd;
  /**
   * event: how long this wait held `to`'s start after its stream was
   * otherwise ready (min(from's end, to's start) − ready, at least 0);
   * sync: how long the call was blocked for `from` (from the call's start
   * to from's end, within the call); null otherwise, or where `to`'s
   * readiness is unknown (an operation without its launch call).
   */
  waitNs: Ns | null;
  /** event: the cudaEventRecord call that marked `from`, and the cudaStreamWaitEvent call on `to`'s stream (the first record and the last wait where the wait was passed on through streams without operations); null otherwise or unknown. */
  record: DependencyEnd | null;
  wait: DependencyEnd | null;
}

/** Where an event wait held an operation's start: hatched on its stream's row. */
export interface WaitSpan {
  rowId: string;
  /** When the stream was otherwise ready … */
  startNs: Ns;
  /** … to when the awaited operation ended (at most the waiting operation's start). */
  endNs: Ns;
  waiting: ItemRef;
  /** The awaited operation that ended last. */
  awaited: ItemRef;
}

export interface ItemDependencies {
  ref: ItemRef;
  /** What the item waited for besides its launch (details() has that): event waits, the barrier; a synchronize call: the operation it waited for. */
  waitedFor: Dependency[];
  /** What waited for it: operations after an event wait or the barrier, synchronize calls. */
  waitedBy: Dependency[];
  /** A cudaEventRecord or cudaStreamWaitEvent call: the waits it took part in. */
  through: Dependency[];
  /** The span an event wait held the item's start; null when none did. */
  hold: WaitSpan | null;
  /**
   * A GPU operation's critical chain: at each step the dependency that
   * ended last, from the item back (chain[0].to is the item, chain[k].to is
   * chain[k−1].from), to the launch call that made it possible. Empty for
   * API calls.
   */
  chain: Dependency[];
  /** False when the chain was cut at its length limit before reaching a host call. */
  chainComplete: boolean;
  /** True when a list above was cut at its limit. */
  truncated: boolean;
}

export interface WaitSpans {
  spans: WaitSpan[];
  /** More spans than the limit overlap the window: the longest were kept. */
  truncated: boolean;
  /** Whether the recording holds any wait span at all (none: the page stops asking). */
  any: boolean;
}

/**
 * What a recording imported from a PyTorch profiler (Kineto) trace without
 * CUDA synchronization events says about its dependencies, once, where the
 * report and the timeline show it: such a trace holds launches and GPU work
 * but no cudaEventRecord → cudaStreamWaitEvent pairs, so the dependency view
 * draws no event waits and the what-if replay runs its streams unjoined.
 * The importer writes it into the recording's notes (`streamscope report`
 * prints them) and meta `sync_events` 0; the summary's warnings (the
 * timeline's banner) repeat it from that key.
 */
export const NO_SYNC_EVENTS_NOTE =
  'the trace has no synchronization or dependency data (no cuda_sync events: no stream waits, event records or synchronizes), ' +
  'so no event waits are drawn or replayed; take it with ' +
  'torch.profiler.profile(..., experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True))';

/** Whether a recording's meta says it was imported from a Kineto trace without synchronization events (NO_SYNC_EVENTS_NOTE). */
export function importedWithoutSyncEvents(meta: Readonly<Record<string, string | undefined>>): boolean {
  return meta.imported_from === 'kineto' && meta.sync_events === '0';
}

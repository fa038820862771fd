// The API's dependencies() and waitSpans() over one recording: the
// dependencies analysis/replay/dependencies.ts derives for every operation, turned
// into items the timeline can find (table and id, row, times, a name).
// Built on first use from the whole recording's operations and calls (the
// graph walk, once per recording: on the analysis thread, since it costs
// seconds on ten million operations); each answer then reads a handful of
// edges.
import type { Database } from 'better-sqlite3';
import { criticalChain, dependenciesOf, dependenciesOfOp, holdOf, holdsIn, waitTime, type Dependencies, type Step } from '../analysis/replay/dependencies.ts';
import { callName, type Host } from '../analysis/host.ts';
import { OpKind, type Trace } from '../analysis/trace.ts';
import type { ItemRef, RowId, WaitSpansRequest } from '../contract/api.ts';
import type { Dependency, DependencyEnd, ItemDependencies, WaitSpan, WaitSpans } from '../contract/dependencies.ts';
import { fullName } from '../contract/names.ts';
import { ApiError } from './api-error.ts';
import { apiRowId, itemKindOfCategory, parseRowId, streamRowId } from './item-kinds.ts';

/** Steps of a critical chain at most: a saturated stream's chain runs back through every op before it. */
export const MAX_CHAIN = 256;
/** Dependencies listed per direction at most (a legacy operation may hold up every stream). */
const MAX_LISTED = 500;
/** Spans one waitSpans answer holds at most. */
const MAX_SPANS = 5000;

const OP_TABLES = { kernels: OpKind.Kernel, memcpys: OpKind.Memcpy, memsets: OpKind.Memset } as const;
const TABLE_OF_KIND = { [OpKind.Kernel]: 'kernels', [OpKind.Memcpy]: 'memcpys', [OpKind.Memset]: 'memsets' } as const;

/** A trace item: an op (index into trace.ops) or an API call (index into host.calls). */
type Item = { op: number } | { call: number };

export class DependencyReader {
  readonly #db: Database;
  readonly #load: () => { trace: Trace; host: Host };
  #deps: Dependencies | null = null;
  /** The calls #deps was built from: a growing recording's next revision loads new ones, and the index follows. */
  #builtFor: Host | null = null;

  /** `load`: the whole recording's operations and calls (RecordingQuery holds them). */
  constructor(db: Database, load: () => { trace: Trace; host: Host }) {
    this.#db = db;
    this.#load = load;
  }

  #d(): Dependencies {
    const { trace, host } = this.#load();
    if (!this.#deps || host !== this.#builtFor) {
      this.#deps = dependenciesOf(trace, host);
      this.#builtFor = host;
    }
    return this.#deps;
  }

  item(ref: ItemRef): ItemDependencies {
    const d = this.#d();
    const item = this.#find(d, ref);
    const out: ItemDependencies = { ref, waitedFor: [], waitedBy: [], through: [], hold: null, chain: [], chainComplete: true, truncated: false };
    const add = (list: Dependency[], dep: Dependency) => {
      if (list.length < MAX_LISTED) list.push(dep);
      else out.truncated = true;
    };
    if (item === null) return out; // an item the analysis does not load (an NVTX range, a sync of no call)
    if ('op' in item) {
      const i = item.op;
      for (const s of dependenciesOfOp(d, i)) if (s.kind === 'event' || s.kind === 'barrier') add(out.waitedFor, this.#dependency(d, s));
      for (const j of d.waitsFrom.of(i)) add(out.waitedBy, this.#dependency(d, { kind: 'event', from: i, to: d.waitTo[j]!, edge: j, atNs: 0 }));
      for (const j of d.barriersFrom.of(i)) add(out.waitedBy, this.#dependency(d, { kind: 'barrier', from: i, to: d.barrierTo[j]!, edge: -1, atNs: 0 }));
      for (const j of d.syncsOfOp.of(i)) add(out.waitedBy, this.#dependency(d, { kind: 'sync', from: i, to: d.syncCall[j]!, edge: -1, atNs: 0 }));
      const hold = holdOf(d, i);
      if (hold) out.hold = this.#span(d, i, hold.startNs, hold.endNs, hold.awaited);
      const chain = criticalChain(d, i, MAX_CHAIN);
      out.chain = chain.steps.map((s) => this.#dependency(d, s));
      out.chainComplete = chain.complete;
    } else {
      const k = item.call;
      for (const j of d.syncsOfCall.of(k)) add(out.waitedFor, this.#dependency(d, { kind: 'sync', from: d.syncOp[j]!, to: k, edge: -1, atNs: 0 }));
      const edges = new Set([...d.waitsRecordedBy.of(k), ...d.waitsWaitedBy.of(k)]);
      for (const j of [...edges].sort((a, b) => a - b))
        add(out.through, this.#dependency(d, { kind: 'event', from: d.waitFrom[j]!, to: d.waitTo[j]!, edge: j, atNs: 0 }));
    }
    return out;
  }

  waitSpans(req: WaitSpansRequest): WaitSpans {
    const d = this.#d();
    const spans: WaitSpan[] = [];
    for (const rowId of req.rows) {
      const row = parseRowId(rowId);
      if (row.type !== 'stream') continue;
      for (const h of holdsIn(d, row.lane, req.startNs, req.endNs)) {
        if (d.holdEnd[h]! - d.holdStart[h]! < req.resolutionNs) continue;
        const w = d.holdOp[h]!;
        spans.push(this.#span(d, w, d.holdStart[h]!, d.holdEnd[h]!, holdOf(d, w)!.awaited));
      }
    }
    const truncated = spans.length > MAX_SPANS;
    if (truncated) {
      spans.sort((a, b) => b.endNs - b.startNs - (a.endNs - a.startNs));
      spans.length = MAX_SPANS;
    }
    return { spans, truncated, any: d.holdOp.length > 0 };
  }

  /** The op or call a reference names; null for items the analysis does not hold. */
  #find(d: Dependencies, ref: ItemRef): Item | null {
    const { ops } = d.trace;
    const { calls } = d.host;
    if (ref.table === 'nvtx_ranges') return null;
    if (ref.table === 'syncs') {
      // A synchronization record: the call that made it (cudaStreamWaitEvent, a synchronize).
      const row = this.#db.prepare('SELECT correlation_id AS c, pid FROM syncs WHERE id = ?').get(ref.id) as { c: number; pid: number } | undefined;
      if (!row) throw new ApiError('not-found', `syncs ${ref.id}: no such item in this recording`);
      const k = d.host.callOf(row.pid, row.c);
      return k >= 0 ? { call: k } : null;
    }
    const start = this.#db.prepare(`SELECT start_ns FROM ${ref.table} WHERE id = ?`).pluck().get(ref.id) as number | undefined;
    if (start === undefined) throw new ApiError('not-found', `${ref.table} ${ref.id}: no such item in this recording`);
    if (ref.table === 'api_calls') {
      const k = findSorted(calls.start, calls.length, start, (k) => calls.rowId[k] === ref.id);
      return k >= 0 ? { call: k } : null;
    }
    const kind = OP_TABLES[ref.table];
    const i = findSorted(ops.start, ops.length, start, (i) => ops.kind[i] === kind && ops.rowId[i] === ref.id);
    return i >= 0 ? { op: i } : null;
  }

  #dependency(d: Dependencies, s: Step): Dependency {
    const call = (k: number) => (k >= 0 ? this.#callEnd(d, k) : null);
    const from = s.kind === 'launch' ? this.#callEnd(d, s.from) : this.#opEnd(d, s.from);
    const to = s.kind === 'sync' ? this.#callEnd(d, s.to) : this.#opEnd(d, s.to);
    let waitNs: number | null = null;
    if (s.kind === 'event') waitNs = waitTime(d, s.edge);
    else if (s.kind === 'sync') waitNs = Math.max(0, Math.min(from.endNs, to.endNs) - to.startNs);
    return {
      kind: s.kind,
      from,
      to,
      waitNs,
      record: s.kind === 'event' ? call(d.waitRecord[s.edge]!) : null,
      wait: s.kind === 'event' ? call(d.waitCall[s.edge]!) : null,
    };
  }

  #span(d: Dependencies, w: number, startNs: number, endNs: number, awaited: number): WaitSpan {
    return { rowId: streamRowId(d.trace.ops.stream[w]!), startNs, endNs, waiting: opRef(d, w), awaited: opRef(d, awaited) };
  }

  #opEnd(d: Dependencies, i: number): DependencyEnd {
    const { ops, strings, demangled } = d.trace;
    const kernel = ops.kind[i] === OpKind.Kernel;
    const nameId = ops.detail[i]!;
    return {
      ref: opRef(d, i),
      kind: kernel ? 'kernel' : ops.kind[i] === OpKind.Memset ? 'memset' : itemKindOfCategory(ops.category[i]!),
      rowId: streamRowId(ops.stream[i]!),
      startNs: ops.start[i]!,
      endNs: ops.end[i]!,
      name: kernel ? fullName({ name: strings.get(nameId) ?? `#${nameId}`, demangledName: demangled.get(nameId) ?? null }) : null,
    };
  }

  #callEnd(d: Dependencies, k: number): DependencyEnd {
    const { calls } = d.host;
    const rowId: RowId = apiRowId(calls.pid[k]!, calls.tid[k]!);
    return {
      ref: { table: 'api_calls', id: calls.rowId[k]! },
      kind: 'api',
      rowId,
      startNs: calls.start[k]!,
      endNs: calls.end[k]!,
      name: callName(d.host, k) || null,
    };
  }
}

function opRef(d: Dependencies, i: number): ItemRef {
  return { table: TABLE_OF_KIND[d.trace.ops.kind[i] as 1 | 2 | 3], id: d.trace.ops.rowId[i]! };
}

/**
 * The index of the row `is` accepts among `length` rows sorted by `start`
 * (the loaders' order), looking at those that start at `startNs` first;
 * the whole column where the order does not hold (-1: none).
 */
function findSorted(start: Float64Array, length: number, startNs: number, is: (k: number) => boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (start[mid]! < startNs) lo = mid + 1;
    else hi = mid;
  }
  for (let k = lo; k < length && start[k] === startNs; k++) if (is(k)) return k;
  for (let k = 0; k < length; k++) if (is(k)) return k;
  return -1;
}

// What a PyTorch profiler (Kineto) trace says about dependencies, made into
// the rows the analysis reads, once the native reader has written the
// events (native/addon/src/trace_import.cc writes one `syncs` row per
// cuda_sync event, and a `cuda_events` row per cudaEventRecord Kineto named
// for a wait: wait_on_cuda_event_record_corr_id and wait_on_stream). Two
// passes need the whole trace, so they run here over the written rows:
//
//  * event records Kineto could not name. PyTorch 2.11 with CUDA 13 writes
//    -1 for the record of every wait (Kineto looks the record up among
//    CUPTI's CUDA_EVENT records, which it did not get), so a stream wait
//    names its event but neither the cudaEventRecord call nor the stream
//    the event was recorded on. Without them the analysis ties the wait to
//    nothing. The record is taken to be the last cudaEventRecord call of
//    the waiting call's thread before it, with no work launched between
//    them (PyTorch's wait_stream and wait_event on a new event: record, then
//    wait), and its stream the one stream of the process that the record
//    could have captured work of and that the trace does not contradict:
//    not the waiting stream, with work issued before the record, and whose
//    last such operation ended before the waiting stream's next operation
//    started (an operation that waited for it cannot start sooner). Where
//    more than one stream fits (torch_streams: a side stream waits for the
//    default stream after work went to other side streams), nothing is made
//    up: the wait stays without its record, and the recording's notes say
//    how many did.
//  * autograd's fwdbwd flows (a forward operator → the backward operator
//    made for it): `cpu_ops.forward_id` of the backward operator. Kineto
//    binds each end to the operator starting at its time on its thread.
import type { Db } from '../store/database.ts';

/** How the stream waits of a trace were tied to the event records they waited for. */
export interface EventRecordInference {
  /** Stream waits (syncs of type 2 that name their stream and event). */
  waits: number;
  /** Of those, the ones the trace named the record of. */
  named: number;
  /** Tied by the rule above: a cuda_events row written for each. */
  inferred: number;
  /** Left without a record: more than one stream fitted, none did, or the calls were not in the trace. */
  unresolved: number;
}

const STREAM_WAIT_EVENT = 2;
/** Event record calls of the runtime and the driver API. */
const RECORD_CALL = /^(cudaEventRecord|cuEventRecord)/;

/** Ties the stream waits that name no event record to one, where the trace allows only one (the rule above). */
export function inferEventRecords(db: Db): EventRecordInference {
  const waits = db
    .prepare(
      `SELECT y.pid, y.stream_id AS stream, y.event_id AS eventId, y.correlation_id AS correlation FROM syncs y
      WHERE y.sync_type = ${STREAM_WAIT_EVENT} AND y.stream_id IS NOT NULL AND y.event_id IS NOT NULL ORDER BY y.start_ns, y.id`,
    )
    .all() as { pid: number; stream: number; eventId: number; correlation: number }[];
  const result: EventRecordInference = { waits: waits.length, named: 0, inferred: 0, unresolved: 0 };
  // A wait the trace named the record of: a record of its event before it
  // (correlation ids grow within a process), as its first record is.
  const firstRecord = new Map<string, number>();
  for (const r of db.prepare('SELECT pid, event_id AS e, correlation_id AS c FROM cuda_events').all() as { pid: number; e: number; c: number }[]) {
    const key = `${r.pid}:${r.e}`;
    firstRecord.set(key, Math.min(r.c, firstRecord.get(key) ?? Infinity));
  }
  const open = waits.filter((w) => (firstRecord.get(`${w.pid}:${w.eventId}`) ?? Infinity) >= w.correlation);
  result.named = waits.length - open.length;
  if (open.length === 0) return result;

  // The calls, by process and correlation id (a runtime call before the driver call inside it), and each thread's in start order.
  const recordNames = new Set(
    (db.prepare('SELECT id, value FROM strings').all() as { id: number; value: string }[]).filter((s) => RECORD_CALL.test(s.value)).map((s) => s.id),
  );
  interface Call {
    start: number;
    tid: number;
    correlation: number;
    record: boolean;
    /** Index in its thread's list. */
    at: number;
    launched: boolean;
  }
  const callOf = new Map<string, Call>();
  const threads = new Map<string, Call[]>();
  for (const [pid, tid, start, correlation, nameId, domain] of db
    .prepare('SELECT pid, tid, start_ns, correlation_id, name_id, domain FROM api_calls ORDER BY start_ns, id')
    .raw()
    .iterate() as Iterable<[number, number, number, number, number, number]>) {
    const list = threads.get(`${pid}:${tid}`) ?? threads.set(`${pid}:${tid}`, []).get(`${pid}:${tid}`)!;
    const call: Call = { start, tid, correlation, record: recordNames.has(nameId), at: list.length, launched: false };
    list.push(call);
    const key = `${pid}:${correlation}`;
    if (domain === 1 || !callOf.has(key)) callOf.set(key, call);
  }

  // The GPU operations of each stream in issue order (their launch call's start), with when they ran.
  interface Op {
    issued: number;
    start: number;
    end: number;
  }
  const opsOf = new Map<number, Op[]>();
  for (const table of ['kernels', 'memcpys', 'memsets']) {
    for (const [stream, pid, correlation, start, end] of db
      .prepare(`SELECT t.stream_id, c.pid, t.correlation_id, t.start_ns, t.end_ns FROM ${table} t JOIN contexts c ON c.id = t.context_id`)
      .raw()
      .iterate() as Iterable<[number, number, number, number, number]>) {
      const call = callOf.get(`${pid}:${correlation}`);
      if (!call) continue; // not issued by a call the trace holds: no place in the issue order
      call.launched = true;
      (opsOf.get(stream) ?? opsOf.set(stream, []).get(stream)!).push({ issued: call.start, start, end });
    }
  }
  for (const list of opsOf.values()) list.sort((a, b) => a.issued - b.issued || a.start - b.start);
  const streams = db.prepare('SELECT id, pid, context_id AS context, device_id AS device FROM streams').all() as {
    id: number;
    pid: number;
    context: number;
    device: number | null;
  }[];

  /** The last op of `stream` issued before `t`, or the first issued after it (`after`). */
  const issuedAround = (stream: number, t: number, after: boolean): Op | null => {
    const list = opsOf.get(stream) ?? [];
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (after ? list[mid]!.issued <= t : list[mid]!.issued < t) lo = mid + 1;
      else hi = mid;
    }
    return after ? (list[lo] ?? null) : (list[lo - 1] ?? null);
  };

  const insert = db.prepare(
    'INSERT INTO cuda_events (device_ns, pid, context_id, stream_id, device_id, event_id, correlation_id) VALUES (NULL, ?, ?, ?, ?, ?, ?)',
  );
  // Record calls tied so far → the event they recorded: a record two streams waited for is one row.
  const written = new Map<string, number>();
  for (const w of open) {
    const call = callOf.get(`${w.pid}:${w.correlation}`);
    const thread = call ? threads.get(`${w.pid}:${call.tid}`)! : [];
    // The record: the last event record call of the thread before the wait, no work launched in between.
    let record: Call | null = null;
    for (let k = call ? call.at - 1 : -1; k >= 0; k--) {
      const c = thread[k]!;
      if (c.record) record = c;
      if (c.record || c.launched) break;
    }
    if (!call || !record) {
      result.unresolved++;
      continue;
    }
    const tied = written.get(`${w.pid}:${record.correlation}`);
    if (tied !== undefined) {
      if (tied === w.eventId) result.inferred++;
      else result.unresolved++; // that record was another event's
      continue;
    }
    // The waiting stream's next op may not start before what the event captured ended.
    const next = issuedAround(w.stream, call.start, true);
    const fits = streams.filter((s) => {
      if (s.pid !== w.pid || s.id === w.stream) return false;
      const captured = issuedAround(s.id, record.start, false);
      return captured !== null && (next === null || captured.end <= next.start);
    });
    if (fits.length !== 1) {
      result.unresolved++;
      continue;
    }
    const s = fits[0]!;
    insert.run(w.pid, s.context, s.id, s.device, w.eventId, record.correlation);
    written.set(`${w.pid}:${record.correlation}`, w.eventId);
    result.inferred++;
  }
  return result;
}

/**
 * Sets `forward_id` of each backward operator from the fwdbwd flow ends
 * (the native reader's `flows`: [id, 0 start | 1 finish, pid, tid, time]):
 * an end binds to the operator of its thread that starts at its time, else
 * to the innermost one running then. Returns how many operators got one.
 */
export function bindForwardOps(db: Db, flows: readonly (readonly [number, 0 | 1, number, number, number])[]): number {
  if (flows.length === 0) return 0;
  // The operators of the threads the flows are on, per thread in start order (outer before inner at one start).
  const wanted = new Set(flows.map((f) => `${f[2]}:${f[3]}`));
  const ops = new Map<string, { id: number[]; start: number[]; end: number[] }>();
  for (const [id, pid, tid, start, end] of db
    .prepare('SELECT id, pid, tid, start_ns, end_ns FROM cpu_ops ORDER BY pid, tid, start_ns, end_ns DESC, id')
    .raw()
    .iterate() as Iterable<[number, number, number, number, number]>) {
    const key = `${pid}:${tid}`;
    if (!wanted.has(key)) continue;
    const t = ops.get(key) ?? ops.set(key, { id: [], start: [], end: [] }).get(key)!;
    t.id.push(id);
    t.start.push(start);
    t.end.push(end);
  }
  const opAt = (pid: number, tid: number, at: number): number | null => {
    const t = ops.get(`${pid}:${tid}`);
    if (!t) return null;
    // The last operator starting at or before `at`, then back to one still running at `at`.
    let lo = 0;
    let hi = t.start.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (t.start[mid]! <= at) lo = mid + 1;
      else hi = mid;
    }
    let k = lo - 1;
    // Of the operators starting exactly at `at`, the outermost (the first of them): Kineto's ends are at its start.
    while (k > 0 && t.start[k - 1] === at) k--;
    if (k >= 0 && t.start[k] === at) return t.id[k]!;
    for (k = lo - 1; k >= 0; k--) if (t.end[k]! >= at) return t.id[k]!;
    return null;
  };
  const forward = new Map<number, number>();
  const backward = new Map<number, number[]>();
  for (const [id, finish, pid, tid, at] of flows) {
    const op = opAt(pid, tid, at);
    if (op === null) continue;
    if (finish) (backward.get(id) ?? backward.set(id, []).get(id)!).push(op);
    else if (!forward.has(id)) forward.set(id, op);
  }
  const set = db.prepare('UPDATE cpu_ops SET forward_id = ? WHERE id = ?');
  let n = 0;
  for (const [id, ops] of backward) {
    const f = forward.get(id);
    if (f === undefined) continue;
    for (const b of ops) if (b !== f) n += set.run(f, b).changes;
  }
  return n;
}

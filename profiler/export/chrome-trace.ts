// Export a recording as Chrome trace event JSON, the format Perfetto UI and
// chrome://tracing open: each GPU device a process with one thread per
// stream, each host process with its threads (CUDA API calls, NVTX
// ranges and CPU operations), and a flow arrow from every API call to the
// GPU operation it launched (and from a forward operator to its backward
// one). Synchronizations are Kineto's cuda_sync events, a wait naming the
// cudaEventRecord it waited for, so that a trace imported and exported
// again keeps its dependencies. Written row by row to a stream, so a
// recording of millions of operations never sits in memory as one JSON
// document.
//
// The event shapes follow Kineto's (PyTorch profiler) conventions — cat
// kernel / gpu_memcpy / gpu_memset / cuda_runtime / cuda_driver, args
// {device, context, stream, correlation}, "Memcpy HtoD (Pinned -> Device)"
// — so that tools reading PyTorch traces read ours, and StreamScope's own
// Kineto importer reads an export back.
//
// Times: trace events count microseconds (floats keep the ns), relative to
// the recording origin.
import fs from 'node:fs';
import type { Db } from '../store/database.ts';
import { readMeta } from '../store/database.ts';
import { COPY_KIND_NAMES, MEMORY_KIND_NAMES } from '../cuda/cupti-kinds.ts';
import { beginOutput } from '../store/output-file.ts';
import { checkTimeline, keptRowSql, leftOutNote } from '../store/row-checks.ts';
import { streamKind, streamKindInWords } from '../contract/streams.ts';

/** 'pinned' → 'Pinned', 'device static' → 'Device Static' (Kineto's spelling). */
function memoryKindName(kind: number): string {
  return (MEMORY_KIND_NAMES[kind] ?? 'unknown').replace(/\b\w/g, (c) => c.toUpperCase());
}

/** Kineto's names of CUPTI's synchronization types (syncs.sync_type). */
const SYNC_KINDS: Record<number, string> = { 1: 'Event Sync', 2: 'Stream Wait Event', 3: 'Stream Sync', 4: 'Context Sync' };

/** An operation a CUDA graph launch ran: its graph's and (a kernel's) node's ids, as CUPTI gives them; nothing for any other. */
function graphArgs(graph: number | null, node: number | null): Record<string, number> {
  if (graph === null) return {};
  return node === null ? { 'graph id': graph } : { 'graph id': graph, 'graph node id': node };
}

/** GPU processes get pids above any host pid so the two never collide. */
const GPU_PID_BASE = 1 << 30;

const us = (ns: number) => ns / 1000;

export interface ExportSummary {
  events: number;
  flows: number;
  bytes: number;
  /** What the trace leaves out of the recording, one sentence each: rows not possible (store/row-checks.ts). */
  notes: string[];
}

/**
 * Writes `out` (a file path) from the open recording `db`, through a
 * temporary file published when whole (store/output-file.ts): a failed
 * write (a full disk) never leaves a cut trace that looks like a trace, an
 * existing `out` is replaced only with `overwrite`, and the recording
 * itself (or a link to it) never.
 */
export async function exportChromeTrace(db: Db, out: string, opts: { overwrite?: boolean } = {}): Promise<ExportSummary> {
  // The rows checked as an analysis checks them: a row refused refuses the export; those left out are left out of the trace too (keptRowSql).
  const leftOut = checkTimeline(db.name);
  const output = beginOutput(out, { overwrite: opts.overwrite, inputs: [db.name] });
  try {
    const summary = { ...(await writeChromeTrace(db, output.temp)), notes: leftOut ? [leftOutNote(leftOut)] : [] };
    output.publish();
    return summary;
  } catch (err) {
    output.discard();
    throw err;
  }
}

async function writeChromeTrace(db: Db, out: string): Promise<Omit<ExportSummary, 'notes'>> {
  const file = fs.createWriteStream(out, { flags: 'r+' }); // the temporary, created empty
  const trace = new TraceOutput(file);
  const failed = new Promise<never>((_, reject) => file.once('error', reject));
  await Promise.race([writeEvents(db, trace), failed]);
  return { events: trace.events, flows: trace.flows, bytes: trace.bytes };
}

/** The trace's JSON as it is written to the file: its events one a line, counted with the flows they start and the bytes. */
class TraceOutput {
  events = 0;
  flows = 0;
  bytes = 0;
  private first = true;
  private readonly file: fs.WriteStream;
  constructor(file: fs.WriteStream) {
    this.file = file;
  }

  /** Text as it is, waiting for the file to drain when its buffer is full. */
  async write(s: string): Promise<void> {
    this.bytes += Buffer.byteLength(s);
    if (!this.file.write(s)) await new Promise<void>((resolve) => this.file.once('drain', resolve));
  }

  async event(e: Record<string, unknown>): Promise<void> {
    this.events++;
    await this.write((this.first ? '\n' : ',\n') + JSON.stringify(e));
    this.first = false;
  }

  /** An event that starts a launch's flow arrow. */
  async flowStart(e: Record<string, unknown>): Promise<void> {
    this.flows++;
    await this.event(e);
  }

  /** The file closed, its last write done. */
  async end(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.file.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/** The whole trace, in the order a reader meets it: the header, processes and threads, host rows, GPU rows, synchronizations. */
async function writeEvents(db: Db, trace: TraceOutput): Promise<void> {
  await writeHeader(db, trace);
  const name = stringsOf(db);
  const streams = await writeProcessesAndThreads(db, trace);
  const streamInfo = new Map(streams.map((s) => [s.id, s]));
  const launches = new LaunchFlows(db);
  await writeApiCalls(db, trace, name, launches);
  await writeNvtxRanges(db, trace, name);
  await writeCpuOps(db, trace, name);
  const gpu = new GpuOpEvents(db, trace, streamInfo, launches);
  await writeKernels(db, gpu, name);
  await writeCopies(db, gpu);
  await writeMemsets(db, gpu);
  await writeSyncs(db, trace, streamInfo);
  await trace.write('\n]}\n');
  await trace.end();
}

/** The document's opening: its time unit, where it comes from, and the start of the event list. */
async function writeHeader(db: Db, trace: TraceOutput): Promise<void> {
  const meta = readMeta(db);
  await trace.write(
    `{"displayTimeUnit":"ns","otherData":${JSON.stringify({
      producer: 'StreamScope',
      command: meta.get('command') ?? null,
      origin_ns: meta.get('origin_ns') ?? null,
    })},"traceEvents":[`,
  );
}

/** A strings id's text ('' for none, `#id` for one the table lacks). */
type StringOf = (id: number | null) => string;

function stringsOf(db: Db): StringOf {
  const strings = new Map<number, string>();
  for (const [id, v] of db.prepare('SELECT id, value FROM strings').raw().iterate() as Iterable<[number, string]>) strings.set(id, v);
  return (id) => (id === null ? '' : (strings.get(id) ?? `#${id}`));
}

interface StreamRow {
  id: number;
  device: number | null;
  cupti: number;
  flags: number;
  priority: number | null;
}

/** Processes and threads, named and ordered like StreamScope's timeline: each GPU a process with a thread per stream, each host process. */
async function writeProcessesAndThreads(db: Db, trace: TraceOutput): Promise<StreamRow[]> {
  for (const d of db.prepare('SELECT id, name, ordinal FROM devices ORDER BY id').all() as { id: number; name: string | null; ordinal: number | null }[]) {
    await trace.event({ ph: 'M', name: 'process_name', pid: GPU_PID_BASE + d.id, args: { name: `GPU ${d.ordinal ?? d.id}: ${d.name ?? 'unknown'}` } });
    await trace.event({ ph: 'M', name: 'process_sort_index', pid: GPU_PID_BASE + d.id, args: { sort_index: 1000 + d.id } });
  }
  const streams = db.prepare('SELECT id, device_id AS device, cupti_stream_id AS cupti, flags, priority FROM streams').all() as StreamRow[];
  for (const s of streams) {
    const kind = streamKindInWords(streamKind(s.flags));
    await trace.event({
      ph: 'M',
      name: 'thread_name',
      pid: GPU_PID_BASE + (s.device ?? 0),
      tid: s.id,
      args: { name: `stream ${s.cupti} (${kind}${s.priority ? `, priority ${s.priority}` : ''})` },
    });
    await trace.event({ ph: 'M', name: 'thread_sort_index', pid: GPU_PID_BASE + (s.device ?? 0), tid: s.id, args: { sort_index: s.cupti } });
  }
  for (const p of db.prepare('SELECT pid, command FROM processes').all() as { pid: number; command: string | null }[]) {
    await trace.event({ ph: 'M', name: 'process_name', pid: p.pid, args: { name: `${p.command ?? 'process'} (pid ${p.pid})` } });
  }
  return streams;
}

/** A launch's flow id: the first operation's keeps the plain pid:correlation id. */
const flowId = (pid: number, corr: number, j = 0) => (j === 0 ? `${pid}:${corr}` : `${pid}:${corr}:${j}`);

/**
 * The flow arrows from each API call to the GPU operations it launched:
 * one flow per operation, not one per call that several operations end
 * (chrome://tracing ends a flow at its first end, so a graph launch's other
 * kernels would have no arrow). Counted per call first; the operations then
 * take the flows' numbers one by one.
 */
class LaunchFlows {
  private readonly launched = new Map<string, number>();
  private readonly taken = new Map<string, number>();

  constructor(db: Db) {
    for (const r of db
      .prepare(
        `SELECT c.pid, o.correlation_id AS corr, count(*) FROM (
          SELECT context_id, correlation_id FROM kernels UNION ALL SELECT context_id, correlation_id FROM memcpys
          UNION ALL SELECT context_id, correlation_id FROM memsets) o JOIN contexts c ON c.id = o.context_id GROUP BY 1, 2`,
      )
      .raw()
      .iterate() as Iterable<[number, number, number]>) {
      this.launched.set(`${r[0]}:${r[1]}`, r[2]);
    }
  }

  /** The operations the call (pid, correlation) launched. */
  launchedBy(pid: number, corr: number): number {
    return this.launched.get(flowId(pid, corr)) ?? 0;
  }

  /**
   * The flow the next operation of the call (pid, correlation) ends, null
   * where no call launched it. Numbered in the order the operations are
   * written (each table in start order); only launches of several need the
   * count.
   */
  nextEnd(pid: number, corr: number): string | null {
    const key = flowId(pid, corr);
    const ops = this.launched.get(key);
    if (!ops) return null;
    const j = ops > 1 ? (this.taken.get(key) ?? 0) : 0;
    if (ops > 1) this.taken.set(key, j + 1);
    return flowId(pid, corr, j);
  }
}

/** API calls, each a complete event with a flow start per GPU operation it launched. */
async function writeApiCalls(db: Db, trace: TraceOutput, name: StringOf, launches: LaunchFlows): Promise<void> {
  for (const a of db
    .prepare(
      `SELECT start_ns, end_ns, pid, tid, name_id, correlation_id, return_value, domain, cbid FROM api_calls a WHERE ${keptRowSql('api_calls', 'a')} ORDER BY start_ns`,
    )
    .raw()
    .iterate() as Iterable<[number, number, number, number, number, number, number, number, number]>) {
    const [start, end, pid, tid, nameId, corr, ret, domain, cbid] = a;
    await trace.event({
      ph: 'X',
      cat: domain === 2 ? 'cuda_driver' : 'cuda_runtime',
      name: name(nameId),
      pid,
      tid,
      ts: us(start),
      dur: us(end - start),
      args: { cbid, correlation: corr, return: ret },
    });
    const ops = launches.launchedBy(pid, corr);
    for (let j = 0; j < ops; j++) {
      await trace.flowStart({ ph: 's', cat: 'launch', name: 'launch', id: flowId(pid, corr, j), pid, tid, ts: us(start) });
    }
  }
}

/** NVTX ranges, a mark (no end) as an instant. */
async function writeNvtxRanges(db: Db, trace: TraceOutput, name: StringOf): Promise<void> {
  for (const n of db.prepare('SELECT start_ns, end_ns, pid, tid, name_id FROM nvtx_ranges ORDER BY start_ns').raw().iterate() as Iterable<
    [number, number | null, number, number, number]
  >) {
    const [start, end, pid, tid, nameId] = n;
    if (end === null) await trace.event({ ph: 'i', s: 't', cat: 'nvtx', name: name(nameId), pid, tid, ts: us(start) });
    else await trace.event({ ph: 'X', cat: 'nvtx', name: name(nameId), pid, tid, ts: us(start), dur: us(end - start) });
  }
}

/** CPU operations (an imported PyTorch trace's), in Kineto's categories; a backward operator's flow from its forward one. */
async function writeCpuOps(db: Db, trace: TraceOutput, name: StringOf): Promise<void> {
  for (const [start, end, pid, tid, kind, nameId, id, fStart, fPid, fTid] of db
    .prepare(
      `SELECT o.start_ns, o.end_ns, o.pid, o.tid, o.kind, o.name_id, o.id, f.start_ns, f.pid, f.tid FROM cpu_ops o
        LEFT JOIN cpu_ops f ON f.id = o.forward_id ORDER BY o.start_ns`,
    )
    .raw()
    .iterate() as Iterable<[number, number, number, number, number, number, number, number | null, number | null, number | null]>) {
    await trace.event({ ph: 'X', cat: kind === 2 ? 'python_function' : 'cpu_op', name: name(nameId), pid, tid, ts: us(start), dur: us(end - start) });
    if (fStart !== null) {
      await trace.event({ ph: 's', cat: 'fwdbwd', name: 'fwdbwd', id, pid: fPid, tid: fTid, ts: us(fStart) });
      await trace.event({ ph: 'f', bp: 'e', cat: 'fwdbwd', name: 'fwdbwd', id, pid, tid, ts: us(start) });
    }
  }
}

/** A GPU operation's row: start, end, device, stream, the launching process and its correlation id, then the table's own columns. */
type GpuRowStart = [start: number, end: number, device: number, stream: number, pid: number, corr: number];
type GpuRow = readonly [...GpuRowStart, ...rest: unknown[]];

/** GPU operations on their stream threads, each ending the flow of its launch. */
class GpuOpEvents {
  private readonly trace: TraceOutput;
  private readonly streamInfo: Map<number, StreamRow>;
  /** Each stream's context's CUPTI id, by streams.id. */
  private readonly contextOf: Map<number, number>;
  private readonly launches: LaunchFlows;
  constructor(db: Db, trace: TraceOutput, streamInfo: Map<number, StreamRow>, launches: LaunchFlows) {
    this.trace = trace;
    this.streamInfo = streamInfo;
    const contexts = db.prepare('SELECT s.id, c.cupti_context_id AS ctx FROM streams s JOIN contexts c ON c.id = s.context_id').all() as {
      id: number;
      ctx: number;
    }[];
    this.contextOf = new Map(contexts.map((r) => [r.id, r.ctx]));
    this.launches = launches;
  }

  async write(cat: string, label: string, row: GpuRow, args: Record<string, unknown>): Promise<void> {
    const [start, end, device, stream, pid, corr] = row;
    const { contextOf, streamInfo } = this;
    await this.trace.event({
      ph: 'X',
      cat,
      name: label,
      pid: GPU_PID_BASE + device,
      tid: stream,
      ts: us(start),
      dur: us(end - start),
      args: { device, context: contextOf.get(stream) ?? 0, stream: streamInfo.get(stream)?.cupti ?? stream, correlation: corr, ...args },
    });
    const flow = this.launches.nextEnd(pid, corr);
    if (flow !== null)
      await this.trace.event({ ph: 'f', bp: 'e', cat: 'launch', name: 'launch', id: flow, pid: GPU_PID_BASE + device, tid: stream, ts: us(start) });
  }
}

type KernelRow = [
  ...GpuRowStart,
  nameId: number,
  gx: number,
  gy: number,
  gz: number,
  bx: number,
  by: number,
  bz: number,
  registers: number,
  shared: number,
  graph: number | null,
  node: number | null,
];

async function writeKernels(db: Db, gpu: GpuOpEvents, name: StringOf): Promise<void> {
  for (const k of db
    .prepare(
      `SELECT k.start_ns, k.end_ns, k.device_id, k.stream_id, c.pid, k.correlation_id, k.name_id,
          k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, k.registers_per_thread, k.static_shared_bytes + k.dynamic_shared_bytes,
          k.graph_id, k.graph_node_id
        FROM kernels k JOIN contexts c ON c.id = k.context_id WHERE ${keptRowSql('kernels', 'k')} ORDER BY k.start_ns`,
    )
    .raw()
    .iterate() as Iterable<KernelRow>) {
    const [, , , , , , nameId, gx, gy, gz, bx, by, bz, registers, shared, graph, node] = k;
    await gpu.write('kernel', name(nameId), k, {
      grid: [gx, gy, gz],
      block: [bx, by, bz],
      'registers per thread': registers,
      'shared memory': shared,
      ...graphArgs(graph, node),
    });
  }
}

type CopyRow = [...GpuRowStart, bytes: number, copyKind: number, src: number, dst: number, graph: number | null];

async function writeCopies(db: Db, gpu: GpuOpEvents): Promise<void> {
  for (const m of db
    .prepare(
      `SELECT m.start_ns, m.end_ns, m.device_id, m.stream_id, c.pid, m.correlation_id, m.bytes, m.copy_kind, m.src_kind, m.dst_kind,
          m.graph_id
        FROM memcpys m JOIN contexts c ON c.id = m.context_id WHERE ${keptRowSql('memcpys', 'm')} ORDER BY m.start_ns`,
    )
    .raw()
    .iterate() as Iterable<CopyRow>) {
    const [, , , , , , bytes, copyKind, src, dst, graph] = m;
    const label = `Memcpy ${COPY_KIND_NAMES[copyKind] ?? 'Unknown'} (${memoryKindName(src)} -> ${memoryKindName(dst)})`;
    await gpu.write('gpu_memcpy', label, m, { bytes, ...graphArgs(graph, null) });
  }
}

type MemsetRow = [...GpuRowStart, bytes: number, memoryKind: number, graph: number | null];

async function writeMemsets(db: Db, gpu: GpuOpEvents): Promise<void> {
  for (const m of db
    .prepare(
      `SELECT m.start_ns, m.end_ns, m.device_id, m.stream_id, c.pid, m.correlation_id, m.bytes, m.memory_kind, m.graph_id
        FROM memsets m JOIN contexts c ON c.id = m.context_id WHERE ${keptRowSql('memsets', 'm')} ORDER BY m.start_ns`,
    )
    .raw()
    .iterate() as Iterable<MemsetRow>) {
    const [, , , , , , bytes, kind, graph] = m;
    await gpu.write('gpu_memset', `Memset (${memoryKindName(kind)})`, m, { bytes, ...graphArgs(graph, null) });
  }
}

/**
 * Synchronizations on their stream's thread (none: thread 0 of the
 * device), as Kineto writes CUPTI's; an event wait or synchronize names the
 * last record of its event before it (correlation ids grow within a
 * process).
 */
async function writeSyncs(db: Db, trace: TraceOutput, streamInfo: Map<number, StreamRow>): Promise<void> {
  const records = eventRecords(db);
  const cupti = (stream: number | null) => (stream === null ? -1 : (streamInfo.get(stream)?.cupti ?? -1));
  for (const [start, end, pid, ctx, device, stream, type, eventId, corr] of db
    .prepare(
      `SELECT y.start_ns, y.end_ns, y.pid, c.cupti_context_id, c.device_id, y.stream_id, y.sync_type, y.event_id, y.correlation_id
        FROM syncs y LEFT JOIN contexts c ON c.id = y.context_id ORDER BY y.start_ns`,
    )
    .raw()
    .iterate() as Iterable<[number, number, number, number | null, number | null, number | null, number, number | null, number]>) {
    const kind = SYNC_KINDS[type] ?? 'Unknown';
    const args: Record<string, unknown> = { cuda_sync_kind: kind };
    if (type === 1 || type === 2) {
      const record = (records.get(`${pid}:${eventId}`) ?? []).filter(([c]) => c < corr).at(-1);
      args.wait_on_stream = record ? cupti(record[1]) : -1;
      args.wait_on_cuda_event_record_corr_id = record ? record[0] : -1;
      args.wait_on_cuda_event_id = eventId ?? -1;
    }
    Object.assign(args, { stream: cupti(stream), correlation: corr, device: device ?? 0, context: ctx ?? 0 });
    await trace.event({
      ph: 'X',
      cat: 'cuda_sync',
      name: kind,
      pid: GPU_PID_BASE + (device ?? 0),
      tid: stream ?? 0,
      ts: us(start),
      dur: us(end - start),
      args,
    });
  }
}

/** Each CUDA event's records (`pid:eventId`), in correlation order: their correlation id and stream. */
function eventRecords(db: Db): Map<string, [number, number | null][]> {
  const records = new Map<string, [number, number | null][]>();
  for (const [pid, eventId, corr, stream] of db
    .prepare('SELECT pid, event_id, correlation_id, stream_id FROM cuda_events ORDER BY correlation_id')
    .raw()
    .iterate() as Iterable<[number, number, number, number | null]>) {
    const key = `${pid}:${eventId}`;
    (records.get(key) ?? records.set(key, []).get(key)!).push([corr, stream]);
  }
  return records;
}

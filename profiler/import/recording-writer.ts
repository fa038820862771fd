// Builds a StreamScope recording from another tool's trace, through SQL:
// interned strings, devices, contexts and streams created on first use,
// rows in big transactions, zones and meta at the end. Every importer
// writes through this one class, so imported recordings look like
// recorded ones to the timeline, report, diagnosis and compare.
import Database from 'better-sqlite3';
import { demangle } from '../native/addon.ts';
import { beginOutput, type OutputFile } from '../store/output-file.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { beginBulkLoad, compact, createRecording, endBulkLoad, openRecording, writeMeta, type Db } from '../store/database.ts';
import { ZONED_TABLES, type ZonedTable } from '../store/zone-tables.ts';

/** Rows per transaction: big enough to amortise the commit, small enough to keep memory flat. */
const BATCH = 50_000;

export interface DeviceFacts {
  name?: string | null;
  uuid?: string | null;
  ccMajor?: number | null;
  ccMinor?: number | null;
  smCount?: number | null;
  totalMemoryBytes?: number | null;
  maxThreadsPerSm?: number | null;
  maxRegistersPerSm?: number | null;
  maxSharedMemoryPerSm?: number | null;
}

export interface KernelRow {
  start: number;
  end: number;
  device: number;
  context: number;
  stream: number;
  pid: number;
  correlation: number;
  name: string;
  grid?: [number, number, number];
  block?: [number, number, number];
  registers?: number;
  staticShared?: number;
  dynamicShared?: number;
}
export interface CopyRow {
  start: number;
  end: number;
  device: number;
  context: number;
  stream: number;
  pid: number;
  correlation: number;
  bytes: number;
  copyKind: number;
  srcKind: number;
  dstKind: number;
  async: boolean;
}
export interface MemsetRow {
  start: number;
  end: number;
  device: number;
  context: number;
  stream: number;
  pid: number;
  correlation: number;
  bytes: number;
  value: number;
  memoryKind: number;
  async: boolean;
}
export interface ApiRow {
  start: number;
  end: number;
  pid: number;
  tid: number;
  name: string;
  domain: 1 | 2;
  cbid: number;
  correlation: number;
  returnValue: number;
}
export interface RangeRow {
  start: number;
  end: number | null;
  pid: number;
  tid: number;
  name: string;
  domain?: string;
  /** What the range carried in NVTX's payload extension, by entry name (nvtx_ranges.payload, SCHEMA.md "NVTX payloads"). */
  payload?: Record<string, number | string | null>;
}

export class RecordingWriter {
  readonly file: string;
  /** Written in its temporary file, published as `file` by finish(): a failed import leaves `file` as it was. */
  readonly #output: OutputFile;
  #db: Db;
  readonly #strings = new Map<string, number>();
  readonly #devices = new Map<number, number>(); // source device → devices.id
  readonly #contexts = new Map<string, number>(); // pid:ctx → contexts.id
  readonly #streams = new Map<string, number>(); // contexts.id:stream → streams.id
  readonly #processes = new Set<number>();
  readonly #threads = new Set<string>();
  readonly #threadNames = new Map<string, string>();
  #pending = 0;
  #origin: number;
  #stmts;
  counts = { kernels: 0, memcpys: 0, memsets: 0, apiCalls: 0, ranges: 0, syncs: 0, cudaEvents: 0, cpuOps: 0 };

  /**
   * `originNs`: the source's time zero, in its own clock; every stored time
   * is relative to it. `inputs`: the files the importer reads, never
   * replaced (store/output-file.ts), `overwrite` or not.
   */
  constructor(file: string, opts: { overwrite?: boolean; originNs: number; inputs?: readonly string[] }) {
    this.file = file;
    this.#output = beginOutput(file, { overwrite: opts.overwrite, inputs: opts.inputs });
    try {
      this.#db = createRecording(this.#output.temp);
    } catch (err) {
      this.#output.discard();
      // Said of the output the user named, not of the temporary file.
      throw err instanceof RecordingFileError ? new RecordingFileError(file, err.problem, { cause: err }) : err;
    }
    beginBulkLoad(this.#db); // its index DDL waits in meta until endBulkLoad
    this.#origin = opts.originNs;
    this.#stmts = this.#prepare();
    this.#db.exec('BEGIN');
  }

  #prepare() {
    const db = this.#db;
    return {
      string: db.prepare('INSERT INTO strings (value, demangled) VALUES (?, ?)'),
      device: db.prepare('INSERT INTO devices (ordinal, name) VALUES (?, ?)'),
      context: db.prepare('INSERT INTO contexts (pid, cupti_context_id, device_id) VALUES (?, ?, ?)'),
      stream: db.prepare('INSERT INTO streams (pid, context_id, device_id, cupti_stream_id, flags) VALUES (?, ?, ?, ?, 8)'),
      process: db.prepare('INSERT OR IGNORE INTO processes (pid, complete) VALUES (?, 1)'),
      thread: db.prepare('INSERT OR IGNORE INTO threads (pid, tid) VALUES (?, ?)'),
      kernel: db.prepare(`INSERT INTO kernels (start_ns, end_ns, device_id, context_id, stream_id, correlation_id, name_id, grid_x, grid_y, grid_z,
          block_x, block_y, block_z, registers_per_thread, static_shared_bytes, dynamic_shared_bytes, local_memory_per_thread, launch_type)
          VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,0)`),
      memcpy:
        db.prepare(`INSERT INTO memcpys (start_ns, end_ns, device_id, context_id, stream_id, correlation_id, bytes, copy_kind, src_kind, dst_kind, is_async)
          VALUES (?,?,?,?,?,?,?,?,?,?,?)`),
      memset: db.prepare(`INSERT INTO memsets (start_ns, end_ns, device_id, context_id, stream_id, correlation_id, bytes, value, memory_kind, is_async)
          VALUES (?,?,?,?,?,?,?,?,?,?)`),
      api: db.prepare(`INSERT INTO api_calls (start_ns, end_ns, pid, tid, domain, cbid, name_id, correlation_id, return_value) VALUES (?,?,?,?,?,?,?,?,?)`),
      range: db.prepare('INSERT INTO nvtx_ranges (start_ns, end_ns, pid, tid, name_id, domain_id, payload) VALUES (?,?,?,?,?,?,?)'),
    };
  }

  /**
   * Lets a native writer store the bulk of the rows (the Kineto importer,
   * native/addon/src/trace_import.cc: better-sqlite3 takes ~1 µs a row from
   * JavaScript): this connection commits and closes, `write` fills the file
   * through the addon's own SQLite (never both open at once: two SQLite
   * copies in one process do not see each other's locks), then the
   * connection reopens and learns what was written — the ids of strings,
   * devices, contexts and streams, the processes and threads, the counts and
   * the origin, which the native writer chose at the first timed event.
   */
  handOver<T extends { originNs: number; counts: RecordingWriter['counts'] }>(write: (file: string) => T): T {
    this.#db.exec('COMMIT');
    this.#db.close();
    const result = write(this.#output.temp);
    this.#db = new Database(this.#output.temp);
    this.#stmts = this.#prepare();
    this.#origin = result.originNs;
    this.counts = { ...result.counts };
    const db = this.#db;
    for (const r of db.prepare('SELECT id, value FROM strings').all() as { id: number; value: string }[]) this.#strings.set(r.value, r.id);
    for (const r of db.prepare('SELECT id, ordinal FROM devices').all() as { id: number; ordinal: number }[]) this.#devices.set(r.ordinal, r.id);
    for (const r of db.prepare('SELECT id, pid, cupti_context_id AS c FROM contexts').all() as { id: number; pid: number; c: number }[]) {
      this.#contexts.set(`${r.pid}:${r.c}`, r.id);
    }
    for (const r of db.prepare('SELECT id, context_id AS c, cupti_stream_id AS s FROM streams').all() as { id: number; c: number; s: number }[]) {
      this.#streams.set(`${r.c}:${r.s}`, r.id);
    }
    for (const r of db.prepare('SELECT pid FROM processes').all() as { pid: number }[]) this.#processes.add(r.pid);
    for (const r of db.prepare('SELECT pid, tid FROM threads').all() as { pid: number; tid: number }[]) this.#threads.add(`${r.pid}:${r.tid}`);
    db.exec('BEGIN');
    return result;
  }

  #t(ns: number): number {
    return Math.round(ns - this.#origin);
  }

  /**
   * The connection to the file being written, for an importer's own passes
   * over the rows it wrote (the Kineto importer ties stream waits to event
   * records and backward operators to forward ones): inside the writer's
   * open transaction, before finish().
   */
  get db(): Db {
    return this.#db;
  }

  /**
   * Whether a time (ns, the source's clock) is stored exactly: within
   * ±2^53 ns (104 days) of the origin. Further is no time of the same
   * trace, and SQLite would keep it as a REAL the readers do not expect.
   */
  holds(ns: number): boolean {
    return Number.isSafeInteger(this.#t(ns));
  }

  #string(value: string): number {
    let id = this.#strings.get(value);
    if (id === undefined) {
      // Mangled C++ names (nsys exports keep CUPTI's) get their demangled
      // form, as the native ingest stores it (SCHEMA.md, strings.demangled);
      // only they need the native addon.
      const demangled = value.startsWith('_Z') ? demangle([value])[0]! : null;
      this.#strings.set(value, (id = Number(this.#stmts.string.run(value, demangled).lastInsertRowid)));
    }
    return id;
  }

  #tick(): void {
    if (++this.#pending >= BATCH) {
      this.#db.exec('COMMIT');
      this.#db.exec('BEGIN');
      this.#pending = 0;
    }
  }

  process(pid: number): void {
    if (!this.#processes.has(pid)) {
      this.#processes.add(pid);
      this.#stmts.process.run(pid);
    }
  }

  #thread(pid: number, tid: number): void {
    this.process(pid);
    const key = `${pid}:${tid}`;
    if (!this.#threads.has(key)) {
      this.#threads.add(key);
      this.#stmts.thread.run(pid, tid);
    }
  }

  /** devices.id of the source's device `source` (created on first use). */
  device(source: number, facts: DeviceFacts = {}): number {
    let id = this.#devices.get(source);
    if (id === undefined) {
      id = Number(this.#stmts.device.run(source, facts.name ?? null).lastInsertRowid);
      this.#devices.set(source, id);
    }
    if (Object.keys(facts).length) {
      this.#db
        .prepare(
          `UPDATE devices SET name = coalesce(?, name), uuid = coalesce(?, uuid), cc_major = coalesce(?, cc_major), cc_minor = coalesce(?, cc_minor),
          sm_count = coalesce(?, sm_count), total_memory_bytes = coalesce(?, total_memory_bytes), max_threads_per_sm = coalesce(?, max_threads_per_sm),
          max_registers_per_sm = coalesce(?, max_registers_per_sm), max_shared_memory_per_sm = coalesce(?, max_shared_memory_per_sm) WHERE id = ?`,
        )
        .run(
          facts.name ?? null,
          facts.uuid ?? null,
          facts.ccMajor ?? null,
          facts.ccMinor ?? null,
          facts.smCount ?? null,
          facts.totalMemoryBytes ?? null,
          facts.maxThreadsPerSm ?? null,
          facts.maxRegistersPerSm ?? null,
          facts.maxSharedMemoryPerSm ?? null,
          id,
        );
    }
    return id;
  }

  #lane(device: number, context: number, stream: number, pid: number): { device: number; context: number; stream: number } {
    const dev = this.device(device);
    this.process(pid);
    const ck = `${pid}:${context}`;
    let ctx = this.#contexts.get(ck);
    if (ctx === undefined) this.#contexts.set(ck, (ctx = Number(this.#stmts.context.run(pid, context, dev).lastInsertRowid)));
    const sk = `${ctx}:${stream}`;
    let st = this.#streams.get(sk);
    if (st === undefined) this.#streams.set(sk, (st = Number(this.#stmts.stream.run(pid, ctx, dev, stream).lastInsertRowid)));
    return { device: dev, context: ctx, stream: st };
  }

  kernel(k: KernelRow): void {
    const l = this.#lane(k.device, k.context, k.stream, k.pid);
    const g = k.grid ?? [0, 0, 0];
    const b = k.block ?? [0, 0, 0];
    this.#stmts.kernel.run(
      this.#t(k.start),
      this.#t(k.end),
      l.device,
      l.context,
      l.stream,
      k.correlation,
      this.#string(k.name),
      g[0],
      g[1],
      g[2],
      b[0],
      b[1],
      b[2],
      k.registers ?? 0,
      k.staticShared ?? 0,
      k.dynamicShared ?? 0,
    );
    this.counts.kernels++;
    this.#tick();
  }

  memcpy(m: CopyRow): void {
    const l = this.#lane(m.device, m.context, m.stream, m.pid);
    this.#stmts.memcpy.run(
      this.#t(m.start),
      this.#t(m.end),
      l.device,
      l.context,
      l.stream,
      m.correlation,
      m.bytes,
      m.copyKind,
      m.srcKind,
      m.dstKind,
      m.async ? 1 : 0,
    );
    this.counts.memcpys++;
    this.#tick();
  }

  memset(m: MemsetRow): void {
    const l = this.#lane(m.device, m.context, m.stream, m.pid);
    this.#stmts.memset.run(this.#t(m.start), this.#t(m.end), l.device, l.context, l.stream, m.correlation, m.bytes, m.value, m.memoryKind, m.async ? 1 : 0);
    this.counts.memsets++;
    this.#tick();
  }

  apiCall(a: ApiRow): void {
    this.#thread(a.pid, a.tid);
    this.#stmts.api.run(this.#t(a.start), this.#t(a.end), a.pid, a.tid, a.domain, a.cbid, this.#string(a.name), a.correlation, a.returnValue);
    this.counts.apiCalls++;
    this.#tick();
  }

  range(r: RangeRow): void {
    this.#thread(r.pid, r.tid);
    this.#stmts.range.run(
      this.#t(r.start),
      r.end === null ? null : this.#t(r.end),
      r.pid,
      r.tid,
      this.#string(r.name),
      r.domain ? this.#string(r.domain) : null,
      r.payload ? JSON.stringify(r.payload) : null,
    );
    this.counts.ranges++;
    this.#tick();
  }

  /** Moves everything written for process `from` to process `to` (an importer that learned the pid late). */
  reassignPid(from: number, to: number): void {
    if (!this.#processes.has(from)) return;
    this.process(to);
    for (const table of ['contexts', 'streams', 'threads', 'api_calls', 'nvtx_ranges', 'syncs', 'cuda_events', 'cpu_ops']) {
      const moved = this.#db.prepare(`UPDATE ${table} SET pid = ? WHERE pid = ?`).run(to, from).changes;
      // Rows on a thread moved to another lane: zones the native import wrote with the old one are made again (endBulkLoad).
      const zoned = ZONED_TABLES[table as ZonedTable];
      if (moved > 0 && zoned?.laneKind === 'thread') this.#db.prepare('DELETE FROM zones WHERE table_id = ?').run(zoned.id);
    }
    this.#db.prepare('DELETE FROM processes WHERE pid = ?').run(from);
    this.#processes.delete(from);
  }

  readonly #commands = new Map<number, string>();

  /** A process name the source lists (applied at finish to the processes that have data). */
  knownCommand(pid: number, command: string): void {
    this.#commands.set(pid, command);
  }

  /** The command of the process with the most API calls (for the recording's meta). */
  mainCommand(): string | null {
    const top = this.#db.prepare('SELECT pid FROM api_calls GROUP BY pid ORDER BY count(*) DESC LIMIT 1').get() as { pid: number } | undefined;
    return top ? (this.#commands.get(top.pid) ?? null) : null;
  }

  /** Flags (1 legacy default, 2 non-blocking, 4 per-thread default) and priority of a stream; `device` null: unknown here. */
  streamFacts(device: number | null, context: number, stream: number, pid: number, facts: { flags?: number; priority?: number }): void {
    const dev = device ?? [...this.#devices.keys()][0] ?? 0;
    const l = this.#lane(dev, context, stream, pid);
    if (facts.flags !== undefined) this.#db.prepare('UPDATE streams SET flags = ? WHERE id = ?').run(facts.flags, l.stream);
    if (facts.priority !== undefined) this.#db.prepare('UPDATE streams SET priority = ? WHERE id = ?').run(facts.priority, l.stream);
  }

  /** Sets memcpys/memsets.is_async from the name of the API call that issued them (…Async… = 1). */
  markAsyncByApiName(): void {
    for (const t of ['memcpys', 'memsets']) {
      this.#db
        .prepare(
          `UPDATE ${t} SET is_async = 1 WHERE EXISTS (SELECT 1 FROM api_calls a JOIN strings s ON s.id = a.name_id
          JOIN contexts c ON c.id = ${t}.context_id WHERE a.pid = c.pid AND a.correlation_id = ${t}.correlation_id AND s.value LIKE '%Async%')`,
        )
        .run();
    }
  }

  /** A thread's name from the source (applied at finish to threads that have data). */
  threadName(pid: number, tid: number, name: string): void {
    this.#threadNames.set(`${pid}:${tid}`, name);
  }

  /** A process's place in a distributed job, as the source says it (`variable`: where the rank came from, processes.rank_variable). */
  setRank(pid: number, rank: number, worldSize: number | null, variable: string): void {
    this.process(pid);
    this.#db.prepare('UPDATE processes SET rank = ?, world_size = ?, rank_variable = ? WHERE pid = ?').run(rank, worldSize, variable, pid);
  }

  setCommand(pid: number, command: string): void {
    this.process(pid);
    this.#db.prepare('UPDATE processes SET command = ? WHERE pid = ?').run(command, pid);
  }

  /** Commits, builds zones and indexes, writes meta; `meta` adds the source's facts. */
  finish(meta: Record<string, string | number | null | undefined>): void {
    const db = this.#db;
    for (const [pid, command] of this.#commands) if (this.#processes.has(pid)) this.setCommand(pid, command);
    const nameThread = db.prepare('UPDATE threads SET name = ? WHERE pid = ? AND tid = ?');
    for (const [key, name] of this.#threadNames) {
      if (!this.#threads.has(key)) continue;
      const [pid, tid] = key.split(':').map(Number) as [number, number];
      nameThread.run(name, pid, tid);
    }
    db.exec('COMMIT');
    db.close();
    const again = openRecording(this.#output.temp);
    try {
      endBulkLoad(again); // zones for every row, then the indexes beginBulkLoad dropped
      // The span of the API calls and GPU work, from their zones (each zone's earliest start and latest end; reading
      // the rows was 0.4 s of a 1 GiB Kineto trace's import).
      const span = again
        .prepare(
          `SELECT min(start_ns) AS s, max(end_ns) AS e FROM zones WHERE table_id IN (${[ZONED_TABLES.api_calls, ZONED_TABLES.kernels, ZONED_TABLES.memcpys, ZONED_TABLES.memsets].map((t) => t.id).join(', ')})`,
        )
        .get() as { s: number | null; e: number | null };
      writeMeta(again, {
        origin_ns: BigInt(Math.round(this.#origin)),
        duration_ns: span.s !== null && span.e !== null ? span.e - span.s : null,
        complete: true,
        ...meta,
      });
      compact(again, this.#output.temp);
    } finally {
      again.close();
    }
    this.#output.publish();
  }

  /** Removes the half-written recording after a failed import (the source and any existing output are untouched). */
  abandon(): void {
    try {
      this.#db.close();
    } catch {
      // already closed
    }
    this.#output.discard();
  }
}

// The details panel of one item: every stored column as is, the values
// derived from them that a reader wants spelled out (GB/s, enum names,
// grid and block shapes), and the launch in both directions through the
// correlation id: a GPU operation → the API call(s) that issued it, an API
// call → the GPU operations and synchronizations it caused. Many operations
// share one call where a CUDA graph launch ran them: such an operation is
// also told its graph, node and place in the launch, and the call its
// operations by kind (ItemDetails.graph, contract/graphs.ts).
import type { Database } from 'better-sqlite3';
import { rowsByCorrelation, type ZonedTable } from '../store/zones.ts';
import { ApiError } from './api-error.ts';
import type { FieldValue, GraphLaunchInfo, ItemDetails, ItemKind, ItemRef, ItemTable, RowId } from '../contract/api.ts';
import { graphLaunchText } from '../contract/graphs.ts';
import { isGraphLaunch } from '../cuda/call-families.ts';
import type { StoredName } from '../contract/names.ts';
import { COPY_KIND_NAMES } from '../cuda/cupti-kinds.ts';
import {
  apiRowId,
  copyItemName,
  isItemTable,
  itemKindOf,
  MEMSET_ITEM_NAME,
  memoryKindName,
  nvtxRowId,
  streamKind,
  streamRowId,
  syncItemName,
  SYNC_TYPE_NAMES,
} from './item-kinds.ts';

type StoredRow = Record<string, FieldValue>;
type Related = ItemDetails['related'][number];
/** A row that shares the item's correlation id, as stored. */
type Correlated = { table: ZonedTable; row: StoredRow };

/** Looks up a strings id: its value and demangled form (name '' for none). */
export type NameOf = (id: number | null | undefined) => StoredName;

const GPU_TABLES: readonly ZonedTable[] = ['kernels', 'memcpys', 'memsets'];

export class ItemDetailsReader {
  readonly #db: Database;
  readonly #nameOf: NameOf;

  constructor(db: Database, nameOf: NameOf) {
    this.#db = db;
    this.#nameOf = nameOf;
  }

  details(ref: ItemRef): ItemDetails {
    const row = this.#row(ref);
    const correlated = this.#correlated(ref.table, row);
    const related = correlated.map((c) => this.#brief(c.table, c.row));
    const graph = this.#graph(ref.table, row, correlated);
    const fields: Record<string, FieldValue> = { ...row, ...this.#derived(ref.table, row) };
    if (graph) fields.graph_launch = graphLaunchText(graph);
    const { startNs, endNs } = extent(row);
    return {
      ref,
      kind: itemKindOf(ref.table, row as { copy_kind?: number }),
      ...this.#name(ref.table, row),
      startNs,
      endNs,
      durationNs: endNs - startNs,
      fields,
      related,
      rowId: this.#rowId(ref.table, row, related),
      graph,
    };
  }

  #row(ref: ItemRef): StoredRow {
    if (!isItemTable(ref?.table) || !Number.isSafeInteger(ref.id)) {
      throw new ApiError('bad-request', `not an item reference: ${JSON.stringify(ref)} (table must be one of the timeline tables, id an integer)`);
    }
    // The table name is one of ITEM_TABLES (checked above), never user text.
    const row = this.#db.prepare(`SELECT * FROM ${ref.table} WHERE id = ?`).get(ref.id) as StoredRow | undefined;
    if (!row) throw new ApiError('not-found', `${ref.table} ${ref.id}: no such item in this recording`);
    return row;
  }

  #name(table: ItemTable, row: StoredRow): StoredName {
    switch (table) {
      case 'kernels':
      case 'api_calls':
      case 'nvtx_ranges':
        return this.#nameOf(row.name_id as number);
      case 'memcpys':
        return { name: copyItemName(row.copy_kind as number), demangledName: null };
      case 'memsets':
        return { name: MEMSET_ITEM_NAME, demangledName: null };
      case 'syncs':
        return { name: syncItemName(row.sync_type as number), demangledName: null };
    }
  }

  /**
   * Values spelled out for the reader, added beside the stored columns.
   * Their names are what the details panel (renderer/src/panels) and the
   * end-to-end tests read: name, duration_ns, grid, block, GB/s, src, dst,
   * stream, graph_launch (details()); the other enum names end in _name.
   */
  #derived(table: ItemTable, row: StoredRow): Record<string, FieldValue> {
    const out: Record<string, FieldValue> = {};
    const { startNs, endNs } = extent(row);
    out.duration_ns = endNs - startNs;
    if ('name_id' in row) out.name = this.#nameOf(row.name_id as number).name;
    if (row.stream_id !== undefined && row.stream_id !== null) Object.assign(out, this.#streamFields(row.stream_id as number));
    if (table === 'kernels') {
      out.grid = `${row.grid_x}×${row.grid_y}×${row.grid_z}`;
      out.block = `${row.block_x}×${row.block_y}×${row.block_z}`;
    } else if (table === 'memcpys') {
      out.copy_kind_name = COPY_KIND_NAMES[row.copy_kind as number] ?? null;
      out.src = memoryKindName(row.src_kind as number);
      out.dst = memoryKindName(row.dst_kind as number);
    } else if (table === 'memsets') {
      out.memory_kind_name = memoryKindName(row.memory_kind as number);
    } else if (table === 'syncs') {
      out.sync_type_name = SYNC_TYPE_NAMES[row.sync_type as number] ?? null;
    } else if (table === 'api_calls') {
      out.domain_name = row.domain === 1 ? 'runtime' : row.domain === 2 ? 'driver' : null;
    } else if (table === 'nvtx_ranges') {
      out.domain_name = row.domain_id === null || row.domain_id === undefined ? null : this.#nameOf(row.domain_id as number).name;
    }
    if (table === 'memcpys' || table === 'memsets') {
      // bytes per ns is GB/s (1e9 bytes per second), as the report prints it.
      const d = endNs - startNs;
      out['GB/s'] = d > 0 ? Number(((row.bytes as number) / d).toFixed(2)) : null;
    }
    return out;
  }

  /** The stream as the user's program knows it: CUPTI id, kind, priority. */
  #streamFields(streamId: number): Record<string, FieldValue> {
    const s = this.#db.prepare('SELECT cupti_stream_id AS c, flags, priority FROM streams WHERE id = ?').get(streamId) as
      { c: number; flags: number; priority: number | null } | undefined;
    if (!s) return {};
    const kind = streamKind(s.flags);
    return { stream: `${s.c} (${kind}${s.priority ? `, priority ${s.priority}` : ''})`, stream_kind: kind };
  }

  /** The process whose correlation ids the row's belongs to (GPU rows: through their context). */
  #pidOf(row: StoredRow): number | null {
    if (typeof row.pid === 'number') return row.pid;
    if (row.context_id === null || row.context_id === undefined) return null;
    return (this.#db.prepare('SELECT pid FROM contexts WHERE id = ?').pluck().get(row.context_id) as number | undefined) ?? null;
  }

  #correlated(table: ItemTable, row: StoredRow): Correlated[] {
    if (table === 'nvtx_ranges') return []; // NVTX ranges have no correlation id
    const pid = this.#pidOf(row);
    if (pid === null) return [];
    const targets: readonly ZonedTable[] = table === 'api_calls' ? [...GPU_TABLES, 'syncs'] : ['api_calls'];
    return targets.flatMap((t) => rowsByCorrelation<StoredRow>(this.#db, t, pid, row.correlation_id as number).map((r) => ({ table: t, row: r })));
  }

  /**
   * The graph launch an operation belongs to, or a call launched: null
   * unless graph ids were recorded for it. An operation's siblings are the
   * GPU rows of its correlation id (its call's), read by their zones as the
   * related rows are; a call's are its related rows themselves.
   */
  #graph(table: ItemTable, row: StoredRow, correlated: Correlated[]): GraphLaunchInfo | null {
    const isOp = (GPU_TABLES as readonly string[]).includes(table);
    let ops: Correlated[];
    if (isOp) {
      if (row.graph_id === null || row.graph_id === undefined) return null;
      const pid = this.#pidOf(row);
      ops =
        pid === null
          ? [{ table: table as ZonedTable, row }]
          : GPU_TABLES.flatMap((t) => rowsByCorrelation<StoredRow>(this.#db, t, pid, row.correlation_id as number).map((r) => ({ table: t, row: r })));
    } else if (table === 'api_calls') {
      ops = correlated.filter((c) => c.table !== 'syncs');
    } else return null;
    const graphIds = ops.map((c) => c.row.graph_id).filter((g): g is number => typeof g === 'number');
    if (graphIds.length === 0) return null;
    const count = (t: ZonedTable) => ops.filter((c) => c.table === t).length;
    const nodes = new Set(ops.map((c) => c.row.graph_node_id).filter((n) => typeof n === 'number'));
    const common = { kernels: count('kernels'), memcpys: count('memcpys'), memsets: count('memsets'), nodes: nodes.size };
    if (!isOp) return { graphId: graphIds.reduce((m, g) => Math.min(m, g), Infinity), nodeId: null, call: null, ...common, position: null };
    // Its place in the launch: the launch's operations in start order (ties by table, then id).
    const order = GPU_TABLES as readonly string[];
    ops.sort(
      (a, b) =>
        (a.row.start_ns as number) - (b.row.start_ns as number) ||
        order.indexOf(a.table) - order.indexOf(b.table) ||
        (a.row.id as number) - (b.row.id as number),
    );
    const position = ops.findIndex((c) => c.table === table && c.row.id === row.id) + 1;
    // The launching call: the graph launch itself where a driver call shares its correlation id.
    const calls = correlated.filter((c) => c.table === 'api_calls');
    const launch = calls.find((c) => isGraphLaunch(this.#nameOf(c.row.name_id as number).name)) ?? calls[0];
    return {
      graphId: row.graph_id as number,
      nodeId: typeof row.graph_node_id === 'number' ? row.graph_node_id : null,
      call: launch ? { ref: { table: 'api_calls', id: launch.row.id as number }, name: this.#nameOf(launch.row.name_id as number).name } : null,
      ...common,
      position: position > 0 ? position : null,
    };
  }

  #brief(table: ItemTable, row: StoredRow): Related {
    const { startNs, endNs } = extent(row);
    return {
      ref: { table, id: row.id as number },
      kind: itemKindOf(table, row as { copy_kind?: number }) as ItemKind,
      ...this.#name(table, row),
      startNs,
      endNs,
      rowId: this.#rowId(table, row, []),
    };
  }

  /**
   * The timeline row that draws the item. A synchronization of no stream
   * (context or event synchronize) is drawn on no stream row: it points at
   * the row of the API call that waited, when there is one.
   */
  #rowId(table: ItemTable, row: StoredRow, related: Related[]): RowId {
    if (table === 'api_calls') return apiRowId(row.pid as number, row.tid as number);
    if (table === 'nvtx_ranges') return nvtxRowId(row.pid as number, row.tid as number);
    if (row.stream_id === null || row.stream_id === undefined) return related.find((r) => r.ref.table === 'api_calls')?.rowId ?? streamRowId(0);
    return streamRowId(row.stream_id as number);
  }
}

/** An item's time span; an NVTX marker (no end) is a point. */
function extent(row: StoredRow): { startNs: number; endNs: number } {
  const startNs = row.start_ns as number;
  return { startNs, endNs: row.end_ns === null || row.end_ns === undefined ? startNs : (row.end_ns as number) };
}

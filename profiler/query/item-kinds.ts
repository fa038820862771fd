// How stored rows appear in the API: their ItemKind (colour and legend),
// the names of the CUPTI enums they store, their timeline row ids. One
// place, so the timeline, the details panel and search always agree.
import { categoryOfCopyKind, OpCategory } from '../analysis/trace.ts';
import { COPY_KIND_NAMES, MEMORY_KIND_NAMES } from '../cuda/cupti-kinds.ts';
import { threadLane, type Lane, type ZonedTable } from '../store/zones.ts';
import { ApiError } from './api-error.ts';
import { ITEM_TABLES, type ItemKind, type ItemTable, type RowId } from '../contract/api.ts';

const COPY_ITEM_KIND: Partial<Record<number, ItemKind>> = {
  [OpCategory.HtoD]: 'memcpy-h2d',
  [OpCategory.DtoH]: 'memcpy-d2h',
  [OpCategory.DtoD]: 'memcpy-d2d',
  [OpCategory.PtoP]: 'memcpy-peer',
};

/** memcpys.copy_kind → ItemKind (arrays count as device memory; HtoH and unknown kinds are 'other'). */
export function itemKindOfCopy(copyKind: number): ItemKind {
  return itemKindOfCategory(categoryOfCopyKind(copyKind));
}

/** A copy's category (analysis/trace.ts OpCategory) → ItemKind. */
export function itemKindOfCategory(category: number): ItemKind {
  return COPY_ITEM_KIND[category] ?? 'memcpy-other';
}

/** CUpti_ActivitySynchronizationType names (syncs.sync_type). */
export const SYNC_TYPE_NAMES: Record<number, string> = {
  1: 'event synchronize',
  2: 'stream wait event',
  3: 'stream synchronize',
  4: 'context synchronize',
};

/** Display names of the items that have no stored name (details and search agree on them). */
export const copyItemName = (copyKind: number) => `Memcpy ${COPY_KIND_NAMES[copyKind] ?? `kind ${copyKind}`}`;
export const syncItemName = (syncType: number) => `Synchronize (${SYNC_TYPE_NAMES[syncType] ?? `type ${syncType}`})`;
export const MEMSET_ITEM_NAME = 'Memset';

/** streams.flags → the kind the timeline labels a stream with: the contract's, which the report says too. */
export { streamKind } from '../contract/streams.ts';

export function memoryKindName(kind: number): string {
  return MEMORY_KIND_NAMES[kind] ?? `unknown (${kind})`;
}

/** The kind of an item of `table`, from its row (memcpys need copy_kind). */
export function itemKindOf(table: ItemTable, row: { copy_kind?: number | null }): ItemKind {
  switch (table) {
    case 'kernels':
      return 'kernel';
    case 'memcpys':
      return itemKindOfCopy(row.copy_kind ?? 0);
    case 'memsets':
      return 'memset';
    case 'syncs':
      return 'sync';
    case 'api_calls':
      return 'api';
    case 'nvtx_ranges':
      return 'nvtx';
  }
}

export function isItemTable(t: unknown): t is ItemTable {
  return typeof t === 'string' && (ITEM_TABLES as readonly string[]).includes(t);
}

export const streamRowId = (streamId: number): RowId => `stream:${streamId}`;
export const apiRowId = (pid: number, tid: number): RowId => `api:${pid}:${tid}`;
export const nvtxRowId = (pid: number, tid: number): RowId => `nvtx:${pid}:${tid}`;

/** A timeline row: which lanes of which tables it draws. */
export interface ParsedRow {
  type: 'stream' | 'api' | 'nvtx';
  tables: ZonedTable[];
  lane: Lane;
}

const ROW_TABLES: Record<ParsedRow['type'], ZonedTable[]> = {
  stream: ['kernels', 'memcpys', 'memsets', 'syncs'],
  api: ['api_calls'],
  nvtx: ['nvtx_ranges'],
};

/** Parses a RowId (api.ts); anything else is a bad request. */
export function parseRowId(rowId: RowId): ParsedRow {
  const m = /^(?:stream:(\d+)|(api|nvtx):(\d+):(\d+))$/.exec(String(rowId));
  if (!m) throw new ApiError('bad-request', `unknown timeline row '${rowId}' (expected stream:<id>, api:<pid>:<tid> or nvtx:<pid>:<tid>)`);
  if (m[1] !== undefined) return { type: 'stream', tables: ROW_TABLES.stream, lane: Number(m[1]) };
  const type = m[2] as 'api' | 'nvtx';
  return { type, tables: ROW_TABLES[type], lane: threadLane(Number(m[3]), Number(m[4])) };
}

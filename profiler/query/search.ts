// Search: items whose name contains the text (case-insensitive), optionally
// of some kinds only. A C++ kernel matches by its stored (mangled) name and
// by its demangled one (strings.demangled), which is what people type:
// `CUDAFunctor_add`, `at::native::`. Kernels, API calls and NVTX ranges are named by the
// strings table (small: distinct names), so matching happens there and the
// item tables are read by name_id. Copies, memsets and synchronizations
// have no stored name: they match by the name details() gives them
// ("Memcpy HtoD", "Memset", "Synchronize (stream synchronize)"), one group
// per copy kind / sync type, and carry nameId 0, as in window().
import type { Database } from 'better-sqlite3';
import type { StoredName } from '../contract/names.ts';
import { ApiError } from './api-error.ts';
import type { ItemKind, ItemTable, SearchRequest, SearchResponse } from '../contract/api.ts';
import { copyItemName, itemKindOfCopy, MEMSET_ITEM_NAME, syncItemName } from './item-kinds.ts';

const DEFAULT_LIMIT = 100;
/** Enough matches to step through; each is ~150 bytes of JSON. */
const MAX_LIMIT = 10_000;
/**
 * Names one answer lists, at most: those equal to the text first (what
 * the compare view aligns on), then those with the most time. Copies,
 * memsets and synchronizations (a handful of names) always. A search
 * matching 10^6 distinct kernel names answered 115 MB; the page shows 20
 * and highlights the rest by their text (SearchResponse.namesTotal).
 */
export const MAX_SEARCH_NAMES = 1000;

type FoundItem = SearchResponse['items'][number];

/** How a table's rows are grouped and named. */
interface Source {
  table: ItemTable;
  /** The column that groups rows under one name (SQL over t), or '0' (one group). */
  key: string;
  /** Item end (NVTX markers have none: points). */
  end: string;
  /** Timeline row of an item. */
  rowId: string;
  /** Named by strings (nameId = key) or by nameOf (nameId 0). */
  nameOf: ((key: number) => string) | null;
  kindOf: (key: number) => ItemKind;
}

const SOURCES: Source[] = [
  { table: 'kernels', key: 't.name_id', end: 't.end_ns', rowId: "'stream:' || t.stream_id", nameOf: null, kindOf: () => 'kernel' },
  { table: 'api_calls', key: 't.name_id', end: 't.end_ns', rowId: "'api:' || t.pid || ':' || t.tid", nameOf: null, kindOf: () => 'api' },
  {
    table: 'nvtx_ranges',
    key: 't.name_id',
    end: 'coalesce(t.end_ns, t.start_ns)',
    rowId: "'nvtx:' || t.pid || ':' || t.tid",
    nameOf: null,
    kindOf: () => 'nvtx',
  },
  { table: 'memcpys', key: 't.copy_kind', end: 't.end_ns', rowId: "'stream:' || t.stream_id", nameOf: copyItemName, kindOf: itemKindOfCopy },
  { table: 'memsets', key: '0', end: 't.end_ns', rowId: "'stream:' || t.stream_id", nameOf: () => MEMSET_ITEM_NAME, kindOf: () => 'memset' },
  // A synchronization of no stream is drawn on no stream row: it belongs to the API call that waited.
  {
    table: 'syncs',
    key: 't.sync_type',
    end: 't.end_ns',
    nameOf: syncItemName,
    kindOf: () => 'sync',
    rowId: `coalesce('stream:' || t.stream_id, (SELECT 'api:' || a.pid || ':' || a.tid FROM api_calls a
      WHERE a.correlation_id = t.correlation_id AND a.pid = t.pid LIMIT 1), 'stream:0')`,
  },
];

/** Kinds each table's items can have, to skip tables the kinds filter excludes without reading them. */
const TABLE_KINDS: Record<ItemTable, ItemKind[]> = {
  kernels: ['kernel'],
  api_calls: ['api'],
  nvtx_ranges: ['nvtx'],
  memsets: ['memset'],
  syncs: ['sync'],
  memcpys: ['memcpy-h2d', 'memcpy-d2h', 'memcpy-d2d', 'memcpy-peer', 'memcpy-other'],
};

interface Group {
  k: number;
  count: number;
  totalNs: number;
}

export class NameSearch {
  readonly #db: Database;
  /**
   * Count and time per group key, per table: independent of the text, so
   * each is read once. Unnamed tables are grouped whole (a handful of
   * copy kinds); named ones only for the names a search matched so far,
   * since a GROUP BY over ten million unindexed rows costs seconds and a
   * filtered scan a fraction of that.
   */
  readonly #groups = new Map<ItemTable, Map<number, Group>>();
  readonly #complete = new Set<ItemTable>();

  constructor(db: Database) {
    this.#db = db;
  }

  /** The groups of `src` among `keys` (all groups when keys is null). */
  #groupsOf(src: Source, keys: number[] | null): Group[] {
    let cache = this.#groups.get(src.table);
    if (!cache) this.#groups.set(src.table, (cache = new Map()));
    const select = `SELECT ${src.key} AS k, count(*) AS count, sum(${src.end} - t.start_ns) AS totalNs FROM ${src.table} t`;
    if (keys === null) {
      if (!this.#complete.has(src.table)) {
        for (const g of this.#db.prepare(`${select} GROUP BY 1`).all() as Group[]) cache.set(g.k, g);
        this.#complete.add(src.table);
      }
      return [...cache.values()];
    }
    const missing = this.#complete.has(src.table) ? [] : keys.filter((k) => !cache.has(k));
    if (missing.length) {
      for (const k of missing) cache.set(k, { k, count: 0, totalNs: 0 }); // a name this table does not use stays known as such
      for (const g of this.#db.prepare(`${select} WHERE ${src.key} IN (SELECT value FROM json_each(?)) GROUP BY 1`).all(JSON.stringify(missing)) as Group[])
        cache.set(g.k, g);
    }
    return keys.map((k) => cache.get(k)!).filter((g) => g.count > 0);
  }

  search(req: SearchRequest): SearchResponse {
    if (typeof req?.text !== 'string') throw new ApiError('bad-request', 'search needs { text: string }');
    const db = this.#db;
    const limit = Math.max(0, Math.min(MAX_LIMIT, Math.floor(req.limit ?? DEFAULT_LIMIT)));
    const wanted = (kind: ItemKind) => !req.kinds || req.kinds.includes(kind);
    const text = req.text.toLowerCase();
    // instr(lower()) rather than LIKE: no escaping of % and _; SQLite's lower()
    // folds ASCII, which kernel and API names are written in.
    const matchingNames = new Map<number, StoredName>(
      (
        db.prepare('SELECT id, value, demangled FROM strings WHERE instr(lower(value), ?) > 0 OR instr(lower(demangled), ?) > 0').raw().all(text, text) as [
          number,
          string,
          string | null,
        ][]
      ).map(([id, name, demangledName]) => [id, { name, demangledName }]),
    );
    const names: SearchResponse['names'] = [];
    const items: FoundItem[] = [];
    for (const src of SOURCES) {
      if (!TABLE_KINDS[src.table].some(wanted)) continue;
      const groups = (
        src.nameOf ? this.#groupsOf(src, null).filter((g) => src.nameOf!(g.k).toLowerCase().includes(text)) : this.#groupsOf(src, [...matchingNames.keys()])
      ).filter((g) => wanted(src.kindOf(g.k)));
      if (groups.length === 0) continue;
      for (const g of groups) {
        const name: StoredName = src.nameOf ? { name: src.nameOf(g.k), demangledName: null } : matchingNames.get(g.k)!;
        names.push({ nameId: src.nameOf ? 0 : g.k, ...name, count: g.count, totalNs: g.totalNs });
      }
      if (limit === 0) continue;
      // One scan per table; the first `limit` of each table hold the first `limit` overall.
      // json_each: one bound parameter for any number of keys. After a
      // cursor: later starts, or the same start in a later table or with a
      // larger id (the order of `items`; table names compare as in SQL).
      const a = req.after;
      const afterSql = a ? `AND (t.start_ns > ? OR (t.start_ns = ? AND (? < '${src.table}' OR (? = '${src.table}' AND t.id > ?))))` : '';
      const afterArgs = a ? [a.startNs, a.startNs, a.table, a.table, a.id] : [];
      const rows = db
        .prepare(
          `SELECT t.id, t.start_ns AS s, ${src.end} AS e, ${src.key} AS k, ${src.rowId} AS rowId FROM ${src.table} t
          WHERE ${src.key} IN (SELECT value FROM json_each(?)) ${afterSql} ORDER BY t.start_ns, t.id LIMIT ?`,
        )
        .all(JSON.stringify(groups.map((g) => g.k)), ...afterArgs, limit) as { id: number; s: number; e: number; k: number; rowId: string }[];
      for (const r of rows) {
        items.push({ ref: { table: src.table, id: r.id }, kind: src.kindOf(r.k), startNs: r.s, endNs: r.e, nameId: src.nameOf ? 0 : r.k, rowId: r.rowId });
      }
    }
    items.sort((x, y) => x.startNs - y.startNs || (x.ref.table < y.ref.table ? -1 : x.ref.table > y.ref.table ? 1 : 0) || x.ref.id - y.ref.id);
    const total = names.reduce((t, n) => t + n.count, 0);
    return { names: listedNames(names, text), namesTotal: names.length, items: items.slice(0, limit), total };
  }
}

/** The names an answer lists (MAX_SEARCH_NAMES), most time first. */
function listedNames(names: SearchResponse['names'], text: string): SearchResponse['names'] {
  const byTime = (a: SearchResponse['names'][number], b: SearchResponse['names'][number]) => b.totalNs - a.totalNs || a.name.localeCompare(b.name);
  if (names.length <= MAX_SEARCH_NAMES) return names.sort(byTime);
  const exact = (n: SearchResponse['names'][number]) => n.nameId === 0 || n.name.toLowerCase() === text || n.demangledName?.toLowerCase() === text;
  const first = names.filter(exact);
  const rest = names.filter((n) => !exact(n));
  // Only the time of the rest decides (a full sort of 10^6 names by their text took seconds).
  rest.sort((a, b) => b.totalNs - a.totalNs);
  return [...first.slice(0, MAX_SEARCH_NAMES), ...rest.slice(0, Math.max(0, MAX_SEARCH_NAMES - first.length))].sort(byTime);
}

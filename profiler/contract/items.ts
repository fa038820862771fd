// What the timeline draws: the tables that hold its items and the kinds
// they are drawn as. One list each; the types, the argument checks and the
// query side's table lookups all come from them.

/**
 * The tables of a recording that hold timeline items (profiler/store/SCHEMA.md):
 * the one list; the type, the argument checks and the query side's table
 * lookups all come from it.
 */
export const ITEM_TABLES = ['kernels', 'memcpys', 'memsets', 'syncs', 'api_calls', 'nvtx_ranges'] as const;
export type ItemTable = (typeof ITEM_TABLES)[number];

/** What colour an item gets and what the legend lists. */
export const ITEM_KINDS = ['kernel', 'memcpy-h2d', 'memcpy-d2h', 'memcpy-d2d', 'memcpy-peer', 'memcpy-other', 'memset', 'sync', 'api', 'nvtx'] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];

// Stepping through search matches that come a page at a time (search()
// answers at most SEARCH_LIMIT; the next page is asked for `after` the last
// match of the one before, see SearchRequest.after). Pure: the app keeps
// the state and does the fetching; this decides where a step goes. The
// cursors are the API's (SearchCursor, as the page sends them), opaque here.
import type { SearchCursor } from '../../../profiler/contract/api.ts';

export interface SearchPosition<C = SearchCursor> {
  /** Page shown (0 = first), its size when full, and its matches. */
  page: number;
  pageSize: number;
  length: number;
  /** Index of the current match in the page; -1 for none yet. */
  index: number;
  /** Every match of the search. */
  total: number;
  /** The `after` that fetched each page seen so far (undefined for the first). */
  cursors: readonly (C | undefined)[];
}

export type Step<C = SearchCursor> = { kind: 'within'; index: number } | { kind: 'fetch'; page: number; after: C | undefined; index: 'first' | 'last' };

/** Where a step in `dir` goes from `p`; `lastOfPage` is the cursor of the page's last match. */
export function planStep<C>(p: SearchPosition<C>, dir: 1 | -1, lastOfPage: C | undefined): Step<C> {
  const n = p.length;
  const more = p.page * p.pageSize + n < p.total;
  if (p.index < 0) return { kind: 'within', index: dir === 1 ? 0 : n - 1 };
  if (dir === 1) {
    if (p.index + 1 < n) return { kind: 'within', index: p.index + 1 };
    if (more) return { kind: 'fetch', page: p.page + 1, after: lastOfPage, index: 'first' };
    // The last match of all: back to the first.
    return p.page === 0 ? { kind: 'within', index: 0 } : { kind: 'fetch', page: 0, after: undefined, index: 'first' };
  }
  if (p.index > 0) return { kind: 'within', index: p.index - 1 };
  if (p.page > 0) return { kind: 'fetch', page: p.page - 1, after: p.cursors[p.page - 1], index: 'last' };
  // The first match of all: to the last when it is on this page; the last page is not known otherwise.
  return { kind: 'within', index: more ? 0 : n - 1 };
}

/** The 1-based number of the current match among all, for the counter. */
export function matchNumber(p: SearchPosition<unknown>): number {
  return p.page * p.pageSize + p.index + 1;
}

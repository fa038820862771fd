// Level of detail for one timeline row: what a window answer sends for the
// items of a row at a given resolution (ns per pixel).
//
//   - an item at least one pixel long goes as a TimelineItem;
//   - shorter ones, and pre-aggregated runs of them (zone or per-pixel
//     buckets from the store), merge into CoverageSpans: consecutive work
//     closer than a pixel joins one span, whatever its kind, and the span
//     takes the colour of the kind that contributed most.
//
// Why the answer stays bounded: spans at one depth are separated by gaps of
// at least a pixel, so there are at most (width / resolution + 1) of them per
// depth; items are at least a pixel long and a stream runs one at a time.
// Where that does not hold (items that overlap on one row: an imported
// trace's, ranges nested without end), `limits` holds it: past maxItems
// items, and below maxDepth, an item goes as coverage (still drawn, merged).
// Items must be fed in start order.
import type { ZonedTable, ZoneSpan } from '../store/zones.ts';
import type { CoverageSpan, ItemKind, ItemRef, TimelineItem } from '../contract/api.ts';

interface OpenSpan {
  span: CoverageSpan;
  /** Items per kind merged into the span (for its colour). */
  kinds: Map<ItemKind, number>;
}

export interface RowLimits {
  /** Items at most; later ones go as coverage. */
  maxItems: number;
  /** The deepest NVTX depth drawn; ranges below it go as coverage at it. */
  maxDepth: number;
}

export class RowBuilder {
  readonly items: TimelineItem[] = [];
  readonly resolutionNs: number;
  /** Items sent as coverage by `limits` (past maxItems, or below maxDepth). */
  limited = 0;
  readonly #spans: OpenSpan[] = [];
  /** The span still growing at each depth (NVTX rows nest; other rows have only depth undefined). */
  readonly #last = new Map<number | undefined, OpenSpan>();
  readonly #limits: RowLimits;

  constructor(resolutionNs: number, limits: RowLimits = { maxItems: Infinity, maxDepth: Infinity }) {
    // A zero or negative resolution would send every item; one ns per pixel is the finest there is.
    this.resolutionNs = Math.max(1, resolutionNs);
    this.#limits = limits;
  }

  /** Adds one stored item; returns whether it went as an item (its name is then needed). */
  item(ref: ItemRef, kind: ItemKind, startNs: number, endNs: number, nameId: number, depth?: number): boolean {
    if (endNs - startNs >= this.resolutionNs) {
      if (this.items.length < this.#limits.maxItems && (depth === undefined || depth <= this.#limits.maxDepth)) {
        this.items.push({ ref, kind, startNs, endNs, nameId, ...(depth !== undefined ? { depth } : {}) });
        return true;
      }
      this.limited++;
    }
    this.cover(kind, startNs, endNs, 1, depth);
    return false;
  }

  /** Adds `count` sub-pixel items of `kind` known only by their extent [startNs, endNs]. */
  cover(kind: ItemKind, startNs: number, endNs: number, count: number, depth?: number): void {
    if (depth !== undefined && depth > this.#limits.maxDepth) depth = this.#limits.maxDepth;
    const open = this.#last.get(depth);
    if (open && startNs - open.span.endNs < this.resolutionNs) {
      open.span.endNs = Math.max(open.span.endNs, endNs);
      open.span.count += count;
      open.kinds.set(kind, (open.kinds.get(kind) ?? 0) + count);
      return;
    }
    // A zero-length item (an NVTX marker) still covers one ns, so it is drawn.
    const span: CoverageSpan = { startNs, endNs: Math.max(endNs, startNs + 1), count, kind, ...(depth !== undefined ? { depth } : {}) };
    const next = { span, kinds: new Map([[kind, count]]) };
    this.#spans.push(next);
    this.#last.set(depth, next);
  }

  /** The spans in start order, each coloured by its most frequent kind. */
  coverage(): CoverageSpan[] {
    return this.#spans
      .map(({ span, kinds }) => {
        let best = span.kind;
        let n = 0;
        for (const [k, c] of kinds)
          if (c > n) {
            n = c;
            best = k;
          }
        return { ...span, kind: best };
      })
      .sort((a, b) => a.startNs - b.startNs);
  }
}

/**
 * NVTX nesting depth of ranges given in start order (longer first on equal
 * starts): the number of ranges of the same thread still open when each one
 * starts. Push/pop ranges nest properly; a start/end range that crosses
 * another gets the depth of whatever is open at its start.
 */
export function nestingDepths(ranges: readonly { start: number; end: number }[]): number[] {
  const open: number[] = []; // end times of the enclosing ranges, innermost last
  return ranges.map((r) => {
    while (open.length && open[open.length - 1]! <= r.start) open.pop();
    const depth = open.length;
    open.push(r.end);
    return depth;
  });
}

/**
 * Whether a zone lying wholly inside the window becomes exactly one
 * coverage span at resolution `res` without reading its rows: when it is
 * narrower than a pixel, or when none of its rows is a pixel long and no
 * gap between them is as wide as one (RowBuilder would merge them all into
 * one span from the zone's start to its end). A zone that crosses the
 * window's edge goes row by row, so only the rows inside are counted.
 */
export function zoneIsOneSpan(z: ZoneSpan, window: { startNs: number; endNs: number }, res: number): boolean {
  if (z.startNs < window.startNs || z.endNs > window.endNs) return false;
  if (z.endNs - z.startNs < res) return true;
  return z.maxDurNs !== null && z.maxGapNs !== null && z.maxDurNs < res && z.maxGapNs < res;
}

/**
 * The rows of a zone per copy kind ([[kind, rows]]; one entry of kind null
 * for tables other than memcpys), so that a zone drawn as one span counts
 * each kind as its rows would have.
 */
export function zoneKinds(table: ZonedTable, z: ZoneSpan): [number | null, number][] {
  if (table !== 'memcpys' || !z.copyKindRows) return [[null, z.rows]];
  return Object.entries(JSON.parse(z.copyKindRows) as Record<string, number>).map(([k, n]) => [Number(k), n]);
}

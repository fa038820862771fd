// A table from ids to small integers, for the loops over millions of
// operations or calls that look an id up each time (a stream, a name, a
// correlation id).
//
// The ids are a recording's row ids and CUPTI's counters: handed out in
// sequence, so an array over their span finds one in O(1) where a Map would
// cost tenths of a second per 10 M lookups. But nothing makes a file's ids
// dense: an imported trace, a merge of merges, or a damaged file can name a
// stream 2^31 (an 8 GiB array per lookup table). Where the span is far
// wider than the ids in it, the table is a Map: slower, never large.

/** Span (max − min + 1) an array may cover for `count` ids: room for gaps, never much more than the ids themselves. */
function denseEnough(span: number, count: number): boolean {
  return span <= Math.max(1 << 16, 4 * count);
}

export class IdTable {
  private readonly min: number;
  private readonly missing: number;
  private readonly array: Int32Array | null;
  private readonly map: Map<number, number> | null;

  /** A table over `ids` (the ids that will be set; others read as `missing`), walked once for their range and count. */
  static of(ids: Iterable<number> | ArrayLike<number>, missing = -1): IdTable {
    let min = Infinity;
    let max = -Infinity;
    let count = 0;
    // Columns of millions by index (a typed array's iterator is slower), in a loop of its own with the bounds in
    // locals: through a closure, whose variables live in its context, a column of 10 M stream ids took 120 ms of
    // the Stats tab's tables, this 20 ms. Map keys and Sets by iterator.
    if (typeof (ids as ArrayLike<number>).length === 'number') {
      const list = ids as ArrayLike<number>;
      count = list.length;
      for (let i = 0; i < count; i++) {
        const id = list[i]!;
        if (id < min) min = id;
        if (id > max) max = id;
      }
    } else
      for (const id of ids as Iterable<number>) {
        if (id < min) min = id;
        if (id > max) max = id;
        count++;
      }
    return new IdTable(min, max, count, missing);
  }

  /** A table over an array already filled: `array[id − min]` (native/addon.ts indexCalls). */
  static over(min: number, array: Int32Array, missing = -1): IdTable {
    return new IdTable(min, min + array.length - 1, array.length, missing, array);
  }

  /** A table for `count` ids in [min, max], where the caller knows them already (or its array, `filled`). */
  constructor(min: number, max: number, count: number, missing = -1, filled?: Int32Array) {
    this.missing = missing;
    if (filled) {
      this.min = min;
      this.array = filled;
      this.map = null;
    } else if (count === 0 || !(max >= min)) {
      this.min = 0;
      this.array = new Int32Array(0);
      this.map = null;
    } else if (denseEnough(max - min + 1, count)) {
      this.min = min;
      this.array = new Int32Array(max - min + 1).fill(missing);
      this.map = null;
    } else {
      this.min = 0;
      this.array = null;
      this.map = new Map();
    }
  }

  get(id: number): number {
    if (this.array) {
      const slot = id - this.min;
      return slot >= 0 && slot < this.array.length ? this.array[slot]! : this.missing;
    }
    return this.map!.get(id) ?? this.missing;
  }

  /** Sets `id`, one of the ids the table was made for (another is ignored where the table is an array). */
  set(id: number, value: number): void {
    if (this.array) {
      const slot = id - this.min;
      if (slot >= 0 && slot < this.array.length) this.array[slot] = value;
    } else this.map!.set(id, value);
  }
}

// Order statistics over typed arrays without sorting them: a median of
// millions of values should not pay for a sort (Float64Array.prototype.sort
// of 10 M values: ~0.6 s; selection: ~0.1 s).

/**
 * The k-th smallest value (0-based) of `values`, which is reordered in
 * place (Hoare's selection with a median-of-three pivot: linear on
 * average, and on sorted or constant input, which launch times often are).
 */
export function kthSmallest(values: Float64Array, k: number): number {
  if (!(k >= 0 && k < values.length)) throw new RangeError(`kthSmallest: k = ${k} outside 0..${values.length - 1}`);
  let lo = 0;
  let hi = values.length - 1;
  while (hi > lo) {
    const mid = lo + ((hi - lo) >> 1);
    // Median of three as the pivot.
    const a = values[lo]!;
    const b = values[mid]!;
    const c = values[hi]!;
    const pivot = a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    // Now values[lo..j] <= pivot <= values[i..hi], and values[j+1..i-1] == pivot.
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return pivot;
  }
  return values[k]!;
}

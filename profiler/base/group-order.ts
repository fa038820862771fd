// Indices grouped by a small integer key, each group in index order: a
// counting sort (counted, then placed). At ten million rows, lists grown a
// push at a time, or a Map lookup per row, cost seconds; this is two passes
// over typed arrays.

/** `order` holds 0..n-1 grouped by `groupOf[i]` (0 ≤ it < `groups`), group g at order[offset[g] .. offset[g + 1]). */
export function groupOrder(groupOf: Int32Array, groups: number): { offset: Int32Array; order: Int32Array } {
  const offset = new Int32Array(groups + 1);
  for (let i = 0; i < groupOf.length; i++) offset[groupOf[i]! + 1]!++;
  for (let g = 1; g <= groups; g++) offset[g]! += offset[g - 1]!;
  const next = offset.slice(0, groups);
  const order = new Int32Array(groupOf.length);
  for (let i = 0; i < groupOf.length; i++) order[next[groupOf[i]!]!++] = i;
  return { offset, order };
}

// A value of A against the same value of B, as every row of a diff holds it.
import type { Delta } from '../contract/diff.ts';

/** Either side may be missing (null): then so are the change and the relative change. */
export function delta(a: number | null, b: number | null): Delta {
  const d = a !== null && b !== null ? b - a : null;
  return { a, b, delta: d, relative: d !== null && a ? d / a : null };
}

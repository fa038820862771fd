// Kernel names as people read them.
//
// CUPTI reports C++ kernels by their mangled names (`_ZN2at6native29…`).
// The store keeps that name and, beside it, its demangled form
// (strings.demangled, SCHEMA.md), made by the C++ runtime's demangler in
// native code when the name was stored. Whatever is shown to people starts
// from the demangled form, or from the stored name where there is none (C
// names such as cuBLAS's `sm80_xmma_gemm_…`, names an importer received
// already demangled). The timeline, the tables and the CLI's text reports
// show the function's own name, as Nsight Systems does by default; the
// details panel shows both full forms; JSON outputs keep the stored name
// and add the demangled one.
//
// This module never demangles: it reads the C++ declaration the demangler
// wrote (`void at::native::vectorized_elementwise_kernel<4, …>(int, …)`),
// separating the return type, the scopes, the template arguments and the
// parameters by their brackets.

/** A name as stored, and its demangled form (null: not a mangled C++ name). */
export interface StoredName {
  name: string;
  demangledName: string | null;
}

/** The full readable form: the demangled name where there is one, else the stored name. */
export function fullName(n: StoredName): string {
  return n.demangledName ?? n.name;
}

interface Parts {
  /** The function's own name: `vectorized_elementwise_kernel`. */
  short: string;
  /** With its template arguments (and ABI tags): `vectorized_elementwise_kernel<4, …>`. */
  withArgs: string;
}

const cache = new Map<string, Parts>();

function partsOf(text: string): Parts {
  let p = cache.get(text);
  if (p === undefined) {
    p = parse(text) ?? { short: text, withArgs: text };
    if (cache.size > 50_000) cache.clear();
    cache.set(text, p);
  }
  return p;
}

/**
 * The function's own name out of a readable (demangled) one: return type,
 * scopes, template arguments and parameters dropped —
 * `void at::native::vectorized_elementwise_kernel<4, …>(int, …)` →
 * `vectorized_elementwise_kernel`. Text that is not a function declaration
 * (a C name, `Memcpy HtoD`) comes back as it is.
 */
export function shortName(readable: string): string {
  return partsOf(readable).short;
}

/** The function's own name with its template arguments: `vectorized_elementwise_kernel<4, …>`. */
export function templateName(readable: string): string {
  return partsOf(readable).withArgs;
}

/**
 * For a table listing `names` (stored name → its label): each one's short
 * name where no other name of the list reads the same; else its name with
 * template arguments (two instances of one kernel template); else the full
 * demangled declaration (same name in two namespaces, or overloads); else
 * the stored name, which is unique.
 */
export function readableNames(names: readonly StoredName[]): Map<string, string> {
  const unique = [...new Map(names.map((n) => [n.name, n])).values()];
  const forms = unique.map((n) => {
    const full = fullName(n);
    return [shortName(full), templateName(full), full, n.name];
  });
  const counts = [0, 1, 2, 3].map((tier) => {
    const c = new Map<string, number>();
    for (const f of forms) c.set(f[tier]!, (c.get(f[tier]!) ?? 0) + 1);
    return c;
  });
  const labels = forms.map((f) => f.find((text, tier) => counts[tier]!.get(text) === 1) ?? f[3]!);
  // A label of one tier could still equal another name's label of another
  // tier (a plain name spelled like a template instance): those get their
  // stored names.
  const taken = new Map<string, number>();
  for (const l of labels) taken.set(l, (taken.get(l) ?? 0) + 1);
  return new Map(unique.map((n, i) => [n.name, taken.get(labels[i]!) === 1 ? labels[i]! : n.name]));
}

const OPEN: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/**
 * The last scope component of the declared name, found by brackets: the
 * parameter list is the first top-level `(…)` not followed by `::` (those
 * are scopes: `(anonymous namespace)::`); the name starts after the last
 * top-level space (the return type ends there) or `::` before it. Angle
 * brackets count only outside parentheses, so `(a>b)` in a template
 * argument does not close it. Null when the text is no function
 * declaration or its brackets do not balance.
 */
function parse(text: string): Parts | null {
  const stack: string[] = [];
  let nameStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const top = stack.length === 0;
    if (c in OPEN) {
      if (top && c === '(') {
        const close = closing(text, i);
        if (close < 0) return null;
        if (text.startsWith('::', close + 1)) {
          i = close; // a scope such as (anonymous namespace)
          continue;
        }
        const last = text.slice(nameStart, i);
        if (last === '') return null;
        return { short: /^[^<[]*/.exec(last)![0] || last, withArgs: last };
      }
      stack.push(OPEN[c]!);
    } else if (c === '<' && (top || stack.at(-1) === '>')) {
      stack.push('>');
    } else if (!top && c === stack.at(-1)) {
      stack.pop();
    } else if (top && c === ' ') {
      nameStart = i + 1;
    } else if (top && c === ':' && text[i + 1] === ':') {
      nameStart = i + 2;
      i++;
    }
  }
  return null;
}

/** Index of the bracket closing the one at `open` (every kind nested, angles ignored inside it), -1 if none. */
function closing(text: string, open: number): number {
  const stack: string[] = [];
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c in OPEN) stack.push(OPEN[c]!);
    else if (c === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

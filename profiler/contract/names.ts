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
  own: string;
  /** With its template arguments (and ABI tags): `vectorized_elementwise_kernel<4, …>`. */
  withArgs: string;
  /** The scope it is declared in (`gemvx` of `internal::gemvx::kernel`), anonymous namespaces passed over; '' for none. */
  scope: string;
}

const cache = new Map<string, Parts>();

function partsOf(text: string): Parts {
  let p = cache.get(text);
  if (p === undefined) {
    p = parse(text) ?? { own: text, withArgs: text, scope: '' };
    if (cache.size > 50_000) cache.clear();
    cache.set(text, p);
  }
  return p;
}

/**
 * Function names that say nothing by themselves: CUTLASS's `Kernel2` and
 * `device_kernel`, cuBLAS's `gemvx::kernel`. What tells such kernels apart
 * is their scope and their template arguments
 * (`cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nt_align1>`).
 */
const GENERIC = /^(device_)?kernel\d*$/i;

/** The function's own name; a GENERIC one with its scope before it. */
function named(p: Parts): string {
  return GENERIC.test(p.own) && p.scope ? `${p.scope}::${p.own}` : p.own;
}

/**
 * The function's own name out of a readable (demangled) one: return type,
 * scopes, template arguments and parameters dropped —
 * `void at::native::vectorized_elementwise_kernel<4, …>(int, …)` →
 * `vectorized_elementwise_kernel` — except for a name that says nothing
 * by itself (GENERIC), which keeps its scope and its first template
 * argument, that one's own arguments elided: `cutlass::Kernel2<cutlass_80_simt_…>`,
 * `gemvx::kernel<int, …>`. Text that is not a function declaration (a C
 * name, `Memcpy HtoD`) comes back as it is.
 */
export function shortName(readable: string): string {
  const p = partsOf(readable);
  if (!GENERIC.test(p.own)) return p.own;
  const args = templateArgs(p.withArgs);
  return args.length === 0 ? named(p) : `${named(p)}<${compactArg(args[0]!, 1)}${args.length > 1 ? ', …' : ''}>`;
}

/** The function's own name with its template arguments as written: `vectorized_elementwise_kernel<4, at::native::…>`. */
export function templateName(readable: string): string {
  return partsOf(readable).withArgs;
}

/** How deep readableNames's middle forms show template arguments: `<4, BUnaryFunctor<…>>`, one level further, every level. */
const DEPTHS = [1, 2, Infinity];

/**
 * For a table listing `names` (stored name → its label): each one's
 * shortest form that no other name of the list reads as. First its short
 * name (shortName). Then, for kernels of one name (instances of one
 * template), its template arguments made short (compactArg): one level
 * deep, two, every level, each time with the arguments elided that the
 * kernels it is told apart from (those reading the same one form coarser)
 * all share, so that what is left is what tells them apart:
 * `vectorized_elementwise_kernel<…, BUnaryFunctor<…>, …>`. Then its
 * template arguments as written; its full demangled declaration (same name
 * in two namespaces, or overloads); its stored name, which is unique.
 * Every view of kernels names them through here with the kernels it lists:
 * the report and the Stats tab those of their scope, the diff those of
 * both recordings.
 */
export function readableNames(names: readonly StoredName[]): Map<string, string> {
  const unique = [...new Map(names.map((n) => [n.name, n])).values()];
  const full = unique.map(fullName);
  const parts = full.map(partsOf);
  // Each middle form elides what the kernels it has to tell apart share:
  // those that read the same one form coarser (the short name, then the
  // form before).
  let coarser = full.map(shortName);
  const middle = DEPTHS.map((depth) => {
    const groups = new Map<string, number[]>();
    coarser.forEach((s, i) => {
      const g = groups.get(s);
      if (g) g.push(i);
      else groups.set(s, [i]);
    });
    const args = parts.map((p) => templateArgs(p.withArgs).map((a) => compactArg(a, depth - 1)));
    // Per group, once: whether every member has argument k and all the same one. (Asked per member, it
    // was the square of the group: 40 000 instances of one template took 71 s, a served recording's first window.)
    const sharedIn = new Map<string, boolean[]>();
    for (const [key, group] of groups) {
      const first = args[group[0]!]!;
      sharedIn.set(
        key,
        first.map((a, k) => group.every((j) => args[j]!.length > k && args[j]![k] === a)),
      );
    }
    coarser = unique.map((_, i) => {
      const shared = sharedIn.get(coarser[i]!)!;
      const kept = args[i]!.map((a, k) => (shared[k] ? '…' : a)).filter((a, k, all) => a !== '…' || all[k - 1] !== '…');
      return kept.length === 0 ? named(parts[i]!) : `${named(parts[i]!)}<${kept.join(', ')}>`;
    });
    return coarser;
  });
  const short = full.map(shortName);
  const forms = unique.map((n, i) => [short[i]!, ...middle.map((m) => m[i]!), parts[i]!.withArgs, full[i]!, n.name]);
  const counts = forms[0]?.map((_, tier) => {
    const c = new Map<string, number>();
    for (const f of forms) c.set(f[tier]!, (c.get(f[tier]!) ?? 0) + 1);
    return c;
  });
  const labels = forms.map((f) => f.find((text, tier) => counts![tier]!.get(text) === 1) ?? f.at(-1)!);
  // A label of one tier could still equal another name's label of another
  // tier (a plain name spelled like a template instance): those get their
  // stored names.
  const taken = new Map<string, number>();
  for (const l of labels) taken.set(l, (taken.get(l) ?? 0) + 1);
  return new Map(unique.map((n, i) => [n.name, taken.get(labels[i]!) === 1 ? labels[i]! : n.name]));
}

/** The top-level template arguments of `name<a, b<c>, d>` as written: `a`, `b<c>`, `d`; none without a list. */
function templateArgs(withArgs: string): string[] {
  const open = topLevel(withArgs, (c) => c === '<');
  const close = open < 0 ? -1 : closing(withArgs, open, true);
  return close < 0 ? [] : splitTop(withArgs.slice(open + 1, close), ',').map((a) => a.trim());
}

/**
 * One template argument made short: scopes and parameter lists dropped
 * (`at::native::MulFunctor<float>` → `MulFunctor<float>`), a lambda named
 * by the function it is in (`launch_clamp_scalar(…)::{lambda()#1}::operator()() const::{lambda(float)#1}`
 * → `launch_clamp_scalar::{lambda(float)#1}`), and template arguments
 * shown `depth` levels deep, `<…>` below.
 */
function compactArg(arg: string, depth: number): string {
  const scopes = splitTop(arg, '::');
  const last = scopes.at(-1)!;
  if (last.startsWith('{')) {
    const home = scopes.slice(0, -1).findLast((c) => !c.startsWith('{') && !c.startsWith('operator()'));
    // Its parameters are the lambda's home's, which its name already tells.
    const params = home === undefined ? -1 : topLevel(home, (c) => c === '(');
    const fn = home === undefined || params === 0 ? '' : compactArg(params < 0 ? home : home.slice(0, params), depth);
    return fn ? `${fn}::${last}` : last;
  }
  const open = topLevel(last, (c) => c === '<');
  const close = open < 0 ? -1 : closing(last, open, true);
  if (close < 0) return last;
  const head = last.slice(0, open);
  const tail = last.slice(close + 1);
  if (depth <= 0) return `${head}<…>${tail}`;
  const args = splitTop(last.slice(open + 1, close), ',').map((a) => compactArg(a.trim(), depth - 1));
  return `${head}<${args.join(', ')}>${tail}`;
}

const OPEN: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/**
 * The bracket `c` opens where it stands, if any: `<` only outside
 * parentheses (at the top or inside another `<…>`), so `(a>b)` in a
 * template argument neither opens nor closes one.
 */
function opens(c: string, stack: readonly string[]): string | undefined {
  if (c in OPEN) return OPEN[c];
  if (c === '<' && (stack.length === 0 || stack.at(-1) === '>')) return '>';
  return undefined;
}

/**
 * The last scope component of the declared name, found by brackets: the
 * parameter list is the first top-level `(…)` not followed by `::` (those
 * are scopes: `(anonymous namespace)::`); the name starts after the last
 * top-level space (the return type ends there) or `::` before it. Null
 * when the text is no function declaration or its brackets do not balance.
 */
function parse(text: string): Parts | null {
  const stack: string[] = [];
  let nameStart = 0;
  let scope = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (stack.length === 0) {
      if (c === '(') {
        const close = closing(text, i);
        if (close < 0) return null;
        if (text.startsWith('::', close + 1)) {
          i = close; // a scope such as (anonymous namespace)
          continue;
        }
        const last = text.slice(nameStart, i);
        if (last === '') return null;
        return { own: /^[^<[]*/.exec(last)![0] || last, withArgs: last, scope };
      }
      if (c === ' ') {
        nameStart = i + 1;
        scope = ''; // what came before was the return type
        continue;
      }
      if (c === ':' && text[i + 1] === ':') {
        const component = text.slice(nameStart, i);
        if (component !== '(anonymous namespace)') scope = component;
        nameStart = i + 2;
        i++;
        continue;
      }
    }
    const close = opens(c, stack);
    if (close !== undefined) stack.push(close);
    else if (c === stack.at(-1)) stack.pop();
  }
  return null;
}

/**
 * Index of the bracket closing the one at `open`, -1 if none. Angle
 * brackets count only where `angles` (a template argument list) and then
 * as opens() has them; otherwise every kind but angles nests.
 */
function closing(text: string, open: number, angles = false): number {
  const stack: string[] = [];
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    const close = angles ? opens(c, stack) : OPEN[c];
    if (close !== undefined) stack.push(close);
    else if (c === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

/** Index of the first character outside every bracket that `is` accepts (it may open one), -1 if none. */
function topLevel(text: string, is: (c: string) => boolean): number {
  const stack: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (stack.length === 0 && is(c)) return i;
    const close = opens(c, stack);
    if (close !== undefined) stack.push(close);
    else if (c === stack.at(-1)) stack.pop();
  }
  return -1;
}

/** `text` cut at each `sep` outside every bracket: the arguments of a list (','), the components of a scoped name ('::'). */
function splitTop(text: string, sep: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (stack.length === 0 && text.startsWith(sep, i)) {
      out.push(text.slice(from, i));
      from = i + sep.length;
      i = from - 1;
      continue;
    }
    const close = opens(c, stack);
    if (close !== undefined) stack.push(close);
    else if (c === stack.at(-1)) stack.pop();
  }
  out.push(text.slice(from));
  return out;
}

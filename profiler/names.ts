// Kernel names arrive mangled (Itanium C++ ABI), as CUPTI reports them.
// The timeline, the tables and the CLI's text reports show the function's
// own name, as Nsight Systems does by default; the details panel and every
// JSON output keep the full stored name.
// This is not a demangler: it reads the nested-name components of
// `_Z[N]<len><id>...E<params>` and returns the last one that is not an
// anonymous namespace, and leaves anything it does not recognise alone.
const cache = new Map<string, string>();

export function shortName(name: string): string {
  let s = cache.get(name);
  if (s === undefined) {
    s = parse(name) ?? name;
    if (cache.size > 50_000) cache.clear();
    cache.set(name, s);
  }
  return s;
}

/**
 * For a table listing `names`: each one's short name where no other name of
 * the list has the same one, else its full name (two template instances of
 * one kernel must not read as the same row).
 */
export function readableNames(names: readonly string[]): Map<string, string> {
  const count = new Map<string, number>();
  for (const n of new Set(names)) count.set(shortName(n), (count.get(shortName(n)) ?? 0) + 1);
  return new Map(names.map((n) => [n, count.get(shortName(n))! > 1 ? n : shortName(n)]));
}

function parse(name: string): string | null {
  if (!name.startsWith('_Z')) return null;
  let i = 2;
  if (name[i] === 'L') i++;
  const nested = name[i] === 'N';
  if (nested) i++;
  // CV-qualifiers and ref-qualifiers of member functions.
  while (nested && 'rVKRO'.includes(name[i] ?? '')) i++;
  let last: string | null = null;
  for (;;) {
    if (name.startsWith('St', i)) {
      i += 2;
      continue;
    }
    const m = /^(\d+)/.exec(name.slice(i));
    if (!m) break;
    const len = Number(m[1]);
    const id = name.slice(i + m[1]!.length, i + m[1]!.length + len);
    if (id.length < len) return null;
    i += m[1]!.length + len;
    if (!id.startsWith('_GLOBAL__N')) last = id;
    // Template arguments of a component: keep the name, skip the arguments.
    if (name[i] === 'I') {
      const end = skipTemplateArgs(name, i);
      if (end < 0) return last;
      i = end;
    }
    if (!nested) break;
  }
  return last;
}

/** Index after the `I ... E` template-argument list starting at `i` (nesting-aware, -1 if unbalanced). */
function skipTemplateArgs(name: string, i: number): number {
  let depth = 0;
  for (let j = i; j < name.length; j++) {
    const c = name[j]!;
    if (/\d/.test(c) && depth > 0) {
      const m = /^(\d+)/.exec(name.slice(j))!;
      j += m[1]!.length + Number(m[1]) - 1;
      continue;
    }
    if (c === 'I' || c === 'N' || c === 'X' || c === 'J') depth++;
    else if (c === 'E') {
      depth--;
      if (depth === 0) return j + 1;
    } else if (c === 'L') {
      // literal: L <type> <value> E — counted as an opening of an E-terminated group
      depth++;
    }
  }
  return -1;
}

// The native folders' #include rules, checked as scripts/check-imports.ts
// checks the TypeScript imports (it runs this too): the collector, injected
// into CUDA processes, and the Node addon are built apart and share one
// header, the record stream's one C++ definition
// (native/collector/record_format.h), and nothing else — no encoder, no
// CUPTI code, no Node in the collector (native/README.md says the same in
// words).
//
// Each `#include "…"` is resolved as the unit's build resolves it: the
// including file's folder first, then the unit's include directories, the
// -I its build passes (binding.gyp's include_dirs, the CMake target's
// include directories: kept here beside the rule). An include found in none
// of them is a break too, so a rule cannot go stale with its build.
// `#include <…>` (the system's, CUDA's, Node's) is the build's business,
// not a folder's.
//
//   node scripts/check-native-includes.ts    prints the breaks, exit 1 if any
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Units (folders or files, by path prefix from the repository root; the most
 * specific one containing a file governs it), where their build looks for
 * quoted includes, and what they may include from outside themselves.
 */
export const NATIVE_RULES: { unit: string; includeDirs: string[]; mayInclude: string[] }[] = [
  // Injected into the target process: its own headers only (CUDA's and the
  // system's come as <…>).
  { unit: 'native/collector/', includeDirs: [], mayInclude: [] },
  // The shared header: what it includes the addon would share too, so it
  // includes no header of the project.
  { unit: 'native/collector/record_format.h', includeDirs: [], mayInclude: [] },
  // binding.gyp include_dirs: node-addon-api, better-sqlite3's SQLite,
  // ../collector (for record_format.h alone).
  {
    unit: 'native/addon/',
    includeDirs: ['node_modules/node-addon-api/', 'node_modules/better-sqlite3/deps/sqlite3/', 'native/collector/'],
    mayInclude: ['native/collector/record_format.h', 'node_modules/node-addon-api/', 'node_modules/better-sqlite3/deps/sqlite3/'],
  },
  // The CUDA workload runner: its own headers only.
  { unit: 'native/workloads/', includeDirs: [], mayInclude: [] },
  // The fuzz targets test the addon's units, and the collector's encoder
  // against the addon's decoder (fuzz/CMakeLists.txt: addon/src, collector,
  // SQLite).
  {
    unit: 'native/fuzz/',
    includeDirs: ['native/addon/src/', 'native/collector/', 'node_modules/better-sqlite3/deps/sqlite3/'],
    mayInclude: ['native/addon/src/', 'native/collector/', 'node_modules/better-sqlite3/deps/sqlite3/'],
  },
];

const SOURCE = /\.(c|cc|cpp|cu|h|hpp|cuh)$/;
const INCLUDE = /^[ \t]*#[ \t]*include[ \t]*"([^"]+)"/gm;

function walk(dir: string, out: string[]): void {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'build' || e.name === 'node_modules') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (SOURCE.test(e.name)) out.push(p);
  }
}

function ruleOf(rel: string) {
  let best: (typeof NATIVE_RULES)[number] | undefined;
  for (const r of NATIVE_RULES) if (rel.startsWith(r.unit) && (!best || r.unit.length > best.unit.length)) best = r;
  return best;
}

const posix = (p: string) => p.split(path.sep).join('/');

/**
 * Every quoted include under native/ that its unit's rule does not allow,
 * as `includer -> included` (repository-relative), or `includer -> "name"
 * (not found …)` when its build would not find it.
 */
export function includeBreaks(root = repoRoot): string[] {
  const files: string[] = [];
  walk(path.join(root, 'native'), files);
  const breaks = new Set<string>();
  for (const file of files) {
    const rel = posix(path.relative(root, file));
    const rule = ruleOf(rel);
    if (!rule) continue;
    for (const m of fs.readFileSync(file, 'utf8').matchAll(INCLUDE)) {
      const name = m[1]!;
      const found = [path.dirname(file), ...rule.includeDirs.map((d) => path.join(root, d))]
        .map((dir) => path.resolve(dir, name))
        .find((p) => fs.existsSync(p) && fs.statSync(p).isFile());
      if (!found) {
        breaks.add(`${rel} -> "${name}" (not found in its folder or its include directories)`);
        continue;
      }
      const target = posix(path.relative(root, found));
      // Within its own unit (a folder's headers, a file unit's nothing but itself).
      const own = rule.unit.endsWith('/') ? target.startsWith(rule.unit) : target === rule.unit;
      if (own) continue;
      if (rule.mayInclude.some((allowed) => (allowed.endsWith('/') ? target.startsWith(allowed) : target === allowed))) continue;
      breaks.add(`${rel} -> ${target}`);
    }
  }
  return [...breaks].sort();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const found = includeBreaks();
  for (const b of found) console.log(`BREAK ${b}`);
  process.exit(found.length ? 1 : 0);
}

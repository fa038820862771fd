// Schema version 7: the demangled form of each mangled C++ name
// (strings.demangled; NULL for every other string).
//
// CUPTI reports kernel names mangled (`_ZN2at6native29vectorized_…`);
// people read `void at::native::vectorized_elementwise_kernel<4, …>(…)`.
// Demangling needs the C++ runtime's demangler (native code), which the
// renderer in a browser does not have and which is too slow to run per
// name on every query, so it runs once, when a name is stored (the native
// ingest, the importers' writer), and here for recordings made before.
// The stored value stays as it was: it is what CUPTI and other tools call
// the kernel, and what JSON outputs keep.
import type { Database } from 'better-sqlite3';
import { demangle } from '../../native/addon.ts';

export const version = 7;

export const sql = /* sql */ `
ALTER TABLE strings ADD COLUMN demangled TEXT; -- abi::__cxa_demangle(value) for mangled C++ names (_Z…), else NULL
`;

/** Fills the column for the strings already stored (in the migration's transaction). */
export function run(db: Database): void {
  // substr, not LIKE: LIKE folds case and treats _ as a wildcard.
  const rows = db.prepare("SELECT id, value FROM strings WHERE substr(value, 1, 2) = '_Z'").raw().all() as [number, string][];
  if (rows.length === 0) return; // nothing to demangle: no need for the native addon
  const demangled = demangle(rows.map((r) => r[1]));
  const update = db.prepare('UPDATE strings SET demangled = ? WHERE id = ?');
  rows.forEach(([id], i) => {
    if (demangled[i] !== null) update.run(demangled[i], id);
  });
}

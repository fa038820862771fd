// The layering of the source folders, written down once and checked (as
// Perfetto's tools/check_imports does): which folder may import which. Each
// README says the same in words; this is what holds them to it. Known
// breaks are listed openly under TECHNICAL_DEBT, each with why; a new break
// fails, and so does a listed one that no longer occurs (the list must
// shrink as they are fixed, never go stale).
//
//   node scripts/check-imports.ts        prints the breaks, exit 1 if any is not listed
// It checks native/'s #include rules too (scripts/check-native-includes.ts).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { includeBreaks } from './check-native-includes.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Folders (or files) and what they may import from the others, by path
 * prefix relative to the repository root. The most specific unit that
 * contains a file governs it; a file may always import within its own unit.
 * A unit inside another (analysis/replay/ in analysis/) is a unit of its
 * own: naming the outer one admits the outer one's own files, not the inner
 * one's; a prefix that is no unit (profiler/) admits everything under it.
 */
const ANALYSIS = ['profiler/analysis/', 'profiler/analysis/replay/', 'profiler/analysis/diagnosis/'];
/** The bottom floors of the page, under every view: base, the API, and the contract. */
const PAGE_BASE = ['renderer/src/base/', 'renderer/src/api/', 'profiler/contract/'];

export const RULES: { unit: string; mayImport: string[] }[] = [
  // The contract between the data side and the views: API types, errors'
  // codes, the binary window answer, names, findings, diffs, scopes, time
  // units, what a record request may name. Pure; imports nothing else but
  // package.json, for the version (version.ts).
  { unit: 'profiler/contract/', mayImport: ['package.json'] },
  // Data structures every layer may use (a table over ids): nothing of the project.
  { unit: 'profiler/base/', mayImport: [] },
  { unit: 'profiler/native/', mayImport: ['profiler/contract/'] },
  // What CUDA, CUPTI, NCCL and NVTX are: call families, copy kinds, NCCL's
  // kernel and call names, collective order, NVTX range instances and what
  // each owns. The range rule works over the loader's columns (native/columns.ts).
  { unit: 'profiler/cuda/', mayImport: ['profiler/contract/', 'profiler/base/', 'profiler/native/'] },
  { unit: 'profiler/store/', mayImport: ['profiler/native/', 'profiler/contract/', 'profiler/cuda/', 'profiler/base/'] },
  // The analysis in three floors over its loader: the loader (load/) reads the recording, all its SQL
  // there, into plain typed data (SQL stays in the loader: the measures run over loaded data, so they can be
  // tested on arrays and run on a thread that never touches the file; test/structure/sql-in-loader.test.ts);
  // the measures (busy time, overlap, scopes, start-up, communication) over loaded data; the what-if replay
  // over the measures; the diagnosis (the rules, their what-ifs, jobs) over both. The loader knows none of them.
  { unit: 'profiler/analysis/load/', mayImport: ['profiler/store/', 'profiler/native/', 'profiler/contract/', 'profiler/cuda/', 'profiler/base/'] },
  {
    unit: 'profiler/analysis/',
    mayImport: ['profiler/analysis/load/', 'profiler/store/', 'profiler/native/', 'profiler/contract/', 'profiler/cuda/', 'profiler/base/'],
  },
  {
    unit: 'profiler/analysis/replay/',
    mayImport: [
      'profiler/analysis/',
      'profiler/analysis/load/',
      'profiler/store/',
      'profiler/native/',
      'profiler/contract/',
      'profiler/cuda/',
      'profiler/base/',
    ],
  },
  {
    unit: 'profiler/analysis/diagnosis/',
    mayImport: [
      'profiler/analysis/replay/',
      'profiler/analysis/',
      'profiler/analysis/load/',
      'profiler/store/',
      'profiler/native/',
      'profiler/contract/',
      'profiler/cuda/',
      'profiler/base/',
    ],
  },
  // Recording, importing and merging stand beside the analysis, on the store and the CUDA vocabulary.
  { unit: 'profiler/record/', mayImport: ['profiler/store/', 'profiler/native/', 'profiler/contract/', 'profiler/cuda/', 'profiler/base/'] },
  { unit: 'profiler/import/', mayImport: ['profiler/store/', 'profiler/native/', 'profiler/contract/', 'profiler/cuda/', 'profiler/base/'] },
  { unit: 'profiler/merge/', mayImport: ['profiler/store/', 'profiler/native/', 'profiler/contract/', 'profiler/cuda/', 'profiler/base/'] },
  // A job of many ranks from its ranks' summaries: each rank's analysis (the diagnosis's job reader) placed as merge places
  // recordings (clock alignment, id plans), and kept in the recording (store).
  {
    unit: 'profiler/job/',
    mayImport: [...ANALYSIS, 'profiler/merge/', 'profiler/store/', 'profiler/native/', 'profiler/contract/', 'profiler/cuda/', 'profiler/base/'],
  },
  { unit: 'profiler/report/', mayImport: [...ANALYSIS, 'profiler/contract/', 'profiler/cuda/', 'profiler/base/'] },
  // The diff stands above the report: it prints its tables as the report does.
  { unit: 'profiler/compare/', mayImport: [...ANALYSIS, 'profiler/contract/', 'profiler/cuda/', 'profiler/base/', 'profiler/report/'] },
  { unit: 'profiler/export/', mayImport: ['profiler/store/', ...ANALYSIS, 'profiler/contract/', 'profiler/cuda/', 'profiler/base/'] },
  // The query service answers every question a view asks, so it sits above
  // the analysis, the diff and the exporters; and it opens several
  // recordings as one job through merge (merge/job-cache.ts), or from their
  // ranks' summaries, placed as job/ places them (query/job-query.ts).
  {
    unit: 'profiler/query/',
    mayImport: [
      'profiler/store/',
      ...ANALYSIS,
      'profiler/native/',
      'profiler/contract/',
      'profiler/cuda/',
      'profiler/base/',
      'profiler/compare/',
      'profiler/export/',
      'profiler/merge/',
      'profiler/job/',
    ],
  },
  // Browser mode: above the query service, and, as it, above merge (where merged jobs are cached, how files are grouped).
  { unit: 'profiler/serve/', mayImport: ['profiler/query/', 'profiler/native/', 'profiler/contract/', 'profiler/merge/'] },
  // The CLI is the top of profiler/: everything below it. It starts the desktop app by path (cli/desktop-app.ts), never importing app/.
  { unit: 'profiler/cli/', mayImport: ['profiler/'] },
  { unit: 'app/', mayImport: ['profiler/'] },
  // The page: of the project, the contract only (every byte of data comes through the typed API).
  { unit: 'renderer/', mayImport: ['profiler/contract/'] },
  // Inside the page (renderer/src), in floors, each on those below it and the
  // contract, never up or sideways: base (formatting, colours, the small
  // shared types and hooks: nothing of the page) → api (the one way to data)
  // → the views: the timeline, the Query tab and the record dialog on their
  // own; the scope (what the analyses look at, their answers and progress)
  // over the timeline (its iterations track); the side panels, the Stats tab
  // and the compare view over the scope → app (the shell that composes them)
  // → main.tsx. What a view needs from the shell is handed to it (typed in
  // base/callbacks.ts), never imported.
  { unit: 'renderer/src/base/', mayImport: ['profiler/contract/'] },
  { unit: 'renderer/src/api/', mayImport: ['renderer/src/base/', 'profiler/contract/'] },
  { unit: 'renderer/src/timeline/', mayImport: [...PAGE_BASE] },
  { unit: 'renderer/src/query/', mayImport: [...PAGE_BASE] },
  { unit: 'renderer/src/record/', mayImport: [...PAGE_BASE] },
  { unit: 'renderer/src/scope/', mayImport: ['renderer/src/timeline/', ...PAGE_BASE] },
  { unit: 'renderer/src/panels/', mayImport: ['renderer/src/scope/', 'renderer/src/timeline/', ...PAGE_BASE] },
  { unit: 'renderer/src/stats/', mayImport: ['renderer/src/scope/', 'renderer/src/timeline/', ...PAGE_BASE] },
  { unit: 'renderer/src/compare/', mayImport: ['renderer/src/scope/', 'renderer/src/timeline/', ...PAGE_BASE] },
  // renderer/src/ is no unit: naming it admits every folder under it.
  { unit: 'renderer/src/app/', mayImport: ['renderer/src/', 'profiler/contract/'] },
  { unit: 'renderer/src/main.tsx', mayImport: ['renderer/src/app/'] },
];

const UNITS = new Set(RULES.map((r) => r.unit));

/** Known breaks: `importer -> imported`, with why they are still there. */
export const TECHNICAL_DEBT: Record<string, string> = {};

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

function walk(dir: string, out: string[]): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name === 'build') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (/\.(ts|tsx)$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) out.push(p);
  }
}

function unitOf(rel: string): { unit: string; mayImport: string[] } | undefined {
  let best: { unit: string; mayImport: string[] } | undefined;
  for (const r of RULES) if (rel.startsWith(r.unit) && (!best || r.unit.length > best.unit.length)) best = r;
  return best;
}

/** Every import of the checked folders that its unit's rule does not allow: `importer -> imported`. */
export function importBreaks(root = repoRoot): string[] {
  const files: string[] = [];
  for (const top of ['profiler', 'app', 'renderer/src']) walk(path.join(root, top), files);
  const breaks = new Set<string>();
  for (const file of files) {
    const rel = path.relative(root, file).split(path.sep).join('/');
    const rule = unitOf(rel);
    if (!rule) continue;
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (!spec.startsWith('.')) continue; // packages and node: modules
      const target = path
        .relative(root, path.resolve(path.dirname(file), spec))
        .split(path.sep)
        .join('/');
      const governs = unitOf(target)?.unit;
      if (governs === rule.unit || rel === target) continue;
      if (rule.mayImport.some((allowed) => target.startsWith(allowed) && (governs === allowed || !UNITS.has(allowed) || !governs?.startsWith(allowed))))
        continue;
      breaks.add(`${rel} -> ${target}`);
    }
  }
  return [...breaks].sort();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const found = importBreaks();
  const unlisted = found.filter((b) => !(b in TECHNICAL_DEBT));
  const stale = Object.keys(TECHNICAL_DEBT).filter((b) => !found.includes(b));
  for (const b of found) console.log(`${b in TECHNICAL_DEBT ? 'debt ' : 'BREAK'} ${b}`);
  for (const b of stale) console.log(`STALE ${b} (listed as technical debt, no longer imported: take it off the list)`);
  // native/'s #include rules (check-native-includes.ts): the collector and the addon share the record format header only.
  const native = includeBreaks();
  for (const b of native) console.log(`BREAK ${b}`);
  process.exit(unlisted.length || stale.length || native.length ? 1 : 0);
}

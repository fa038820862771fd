// What the Kineto importer makes of a set of inputs, as digests: the real
// traces, the fuzz corpus, and 600 fuzz recipes from fixed seeds (fields
// of the wrong type, huge, written twice, invalid UTF-8, cut short). The
// digests in test/fixtures/import-golden/kineto.json were first written by
// the JavaScript importer the native one replaced (commit fca3855's
// kineto.ts and json-events.ts); kineto-native.test.ts holds the native
// importer to them, row for row, through both its paths (simdjson, and
// JSON.parse for every event); test/fixtures/import-golden/chrome.json
// likewise for the generic Chrome importer (`--write --chrome`), written
// before its reading moved to the same native scan.
//
// Rewritten once on purpose since, with `node test/import/kineto-golden.ts
// --write` and `--write --chrome`, when schema 11 changed what a Kineto
// trace imports as (docs/COMMANDS.md, "streamscope import"): cpu_op and
// python_function events became cpu_ops rows instead of NVTX ranges (the
// ranges of every input lost exactly those rows, and the string ids of what
// followed them moved: api_calls' and kernels' name_id in 39 inputs, no
// other column, no count), cuda_sync events became syncs and cuda_events
// rows and fwdbwd flows cpu_ops.forward_id (in the two H200 traces added
// then, none of the fuzz inputs has them), meta gained sync_events and a
// note, every recording the empty cpu_ops table (the Chrome importer's
// outcomes changed in that alone), and the result's counts three keys. No
// input's error changed. Once more, for one input, by hand (issue 27): a
// copy's or memset's `bytes` that is not a size (a list, text, 1e400, 2^53
// or more, negative) skips the event, counted, as a field of the wrong type
// does, where it was stored as 0 bytes: fuzz/import-json/bytes-list.json
// lost its one memcpy (and the device, context, stream and zone it made),
// skipped 7 events instead of 6, no other input changed. Any other rewrite
// is a change of behaviour to justify the same way (the file is the
// behaviour's record).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { importTrace } from '../../profiler/import/index.ts';
import { jsonRecipe, materialize } from '../fuzz/lib/json-trace.ts';

const root = path.resolve(import.meta.dirname, '../..');
export const GOLDEN = path.join(root, 'test/fixtures/import-golden/kineto.json');
/** The same inputs through the generic Chrome importer (`--format chrome`), which reads through the same scan. */
export const CHROME_GOLDEN = path.join(root, 'test/fixtures/import-golden/chrome.json');
const GENERATED = 300;

export interface Input {
  name: string;
  /** The file, or its bytes (written to a temporary file to import). */
  file?: string;
  bytes?: string | Uint8Array;
}

export function inputs(): Input[] {
  const list: Input[] = [];
  const dirs = [path.join(root, 'test/fixtures/kineto'), path.join(root, 'test/fixtures/fuzz/import-json')];
  for (const dir of dirs) {
    if (!fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir).sort()) {
      if (!f.endsWith('.json') || f.endsWith('.chrome.json')) continue;
      list.push({ name: `${path.relative(root, dir)}/${f}`, file: path.join(dir, f) });
    }
  }
  fc.sample(jsonRecipe, { seed: 16, numRuns: GENERATED }).forEach((r, i) => list.push({ name: `generated-${i}`, bytes: materialize(r) }));
  // And as many whose text is left whole: the fields' mutations then reach the mapping.
  fc.sample(
    jsonRecipe.map((r) => ({ ...r, text: [] })),
    { seed: 17, numRuns: GENERATED },
  ).forEach((r, i) => list.push({ name: `generated-whole-${i}`, bytes: materialize(r) }));
  return list;
}

/** Every table's rows (rowid order, each value with its storage class) as one SHA-256 per table, and the row counts. */
export function digest(file: string, inputFile: string): Record<string, string> {
  const db = new Database(file, { readonly: true });
  try {
    const out: Record<string, string> = {};
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
    for (const { name } of tables) {
      const cols = (db.prepare(`SELECT name FROM pragma_table_info('${name}')`).all() as { name: string }[]).map((c) => c.name);
      const h = crypto.createHash('sha256');
      let n = 0;
      // Rowid order (the order rows were inserted in); a WITHOUT ROWID table in key order.
      const withoutRowid = /WITHOUT ROWID\s*$/i.test((db.prepare('SELECT sql FROM sqlite_schema WHERE name = ?').get(name) as { sql: string }).sql);
      const order = withoutRowid ? cols.map((_c, i) => i * 2 + 2).join(', ') : 'rowid';
      const sql = `SELECT ${cols.map((c) => `typeof("${c}"), "${c}"`).join(', ')} FROM "${name}" ORDER BY ${order}`;
      for (const row of db.prepare(sql).raw(true).iterate() as Iterable<unknown[]>) {
        // The input's path is in meta; a temporary one would differ run to run.
        const text = JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v === inputFile ? '<input>' : v));
        h.update(text).update('\n');
        n++;
      }
      out[name] = `${n} ${h.digest('hex').slice(0, 32)}`;
    }
    return out;
  } finally {
    db.close();
  }
}

export interface Outcome {
  result?: unknown;
  error?: string;
  tables?: Record<string, string>;
}

/** `parseAllInJs`: the Kineto reader's JSON.parse path for every event. */
export async function outcomeOf(input: Input, work: string, format: 'kineto' | 'chrome' = 'kineto', opts: { parseAllInJs?: boolean } = {}): Promise<Outcome> {
  let file = input.file;
  if (!file) {
    file = path.join(work, 'input.json');
    fs.writeFileSync(file, input.bytes!);
  }
  const out = path.join(work, 'out.sqlite');
  fs.rmSync(out, { force: true });
  try {
    const result = await importTrace(file, out, { format, parseAllInJs: opts.parseAllInJs });
    return { result, tables: digest(out, file) };
  } catch (err) {
    return { error: `${(err as Error).constructor.name}: ${(err as Error).message.split(file).join('<input>')}` };
  } finally {
    fs.rmSync(out, { force: true });
  }
}

if (process.argv.includes('--write')) {
  const format = process.argv.includes('--chrome') ? 'chrome' : 'kineto';
  const target = format === 'chrome' ? CHROME_GOLDEN : GOLDEN;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kineto-golden-'));
  const golden: Record<string, Outcome> = {};
  try {
    for (const input of inputs()) golden[input.name] = await outcomeOf(input, work, format);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  fs.writeFileSync(target, JSON.stringify(golden, null, 1) + '\n');
  console.log(`${Object.keys(golden).length} outcomes → ${target}`);
}

// A recording's summary for the analysis of a job (SCHEMA.md "Rank
// summaries"): what the cross-rank questions need of one rank, a few kB to
// a few hundred, kept in the recording itself so that a job of 1,024 ranks
// is analysed from 1,024 small rows instead of every operation of every
// rank (profiler/job/). Written by `streamscope summarize` (and by the
// recorder when a rank ends); an optional table: a recording without one is
// summarized when a job needs it.
//
// A summary is as good as the recording and the code that made it: it
// carries the recording's fingerprint (its origin and the last id of each
// table of items: a file written again, or still growing, differs) and
// StreamScope's version and the summary's format, and a reader takes it only
// when all three are the current ones.
import { ITEM_TABLES } from '../contract/items.ts';
import { VERSION } from '../contract/version.ts';
import type { Db } from './database.ts';

/**
 * The payload's layout (profiler/job/summary.ts): raised when it changes, so that older summaries are built again.
 * Not raised for a rank's top findings (RankSummary.findings): an optional field, absent from a summary built without
 * them, so a format-2 summary from before reads as one built without them — which it is — and is built again only where
 * they are asked for (summarize.ts readStored); raising it would rebuild every stored summary for nothing.
 */
export const SUMMARY_FORMAT = 3;

/**
 * The row of the rank's steps (RankSummary.iterations), beside its scopes' (format 3): read only when the steps are
 * asked for (`report FILES --iterations`, the job view's iterations row). A step is about 480 B of JSON, twice (both
 * scopes held it in format 2): a rank of 10,000 steps held 10 MB that every job report read and parsed for nothing.
 */
export const STEPS_ROW = 'steps';

const TABLE = 'rank_summary';

/** Whether the recording holds the table at all. */
function hasTable(db: Db): boolean {
  return db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(TABLE) !== undefined;
}

/**
 * What identifies the recording's contents: its origin and the last id of
 * each timeline table (one b-tree descent each). A recording written again
 * or still growing differs.
 */
export function recordingFingerprint(db: Db): string {
  const origin = (db.prepare("SELECT value FROM meta WHERE key = 'origin_ns'").pluck().get() as string | undefined) ?? '';
  const last = ITEM_TABLES.map((t) => (db.prepare(`SELECT max(id) FROM ${t}`).pluck().get() as number | null) ?? 0);
  return `${origin}:${last.join(',')}`;
}

/** The summary stored for `scope` ('whole', 'steady-state', or STEPS_ROW), when it is current (fingerprint, version, format); else null. */
export function readRankSummary(db: Db, scope: string): string | null {
  return readRankSummaries(db, [scope])?.[0] ?? null;
}

/**
 * The payloads stored for `scopes`, in their order, when each of them and each of `alsoCurrent` (whose payloads are
 * left unread: summarize.ts reads a summary's steps only when asked) is current; else null. The recording's fingerprint
 * is taken once for all of them (a job of 1,024 ranks reads three rows of each).
 */
export function readRankSummaries(db: Db, scopes: readonly string[], alsoCurrent: readonly string[] = []): string[] | null {
  return readCurrentSummaries(db, scopes, alsoCurrent)?.payloads ?? null;
}

/** readRankSummaries, with the recording's fingerprint they are current for (which recording of a job it is). */
export function readCurrentSummaries(
  db: Db,
  scopes: readonly string[],
  alsoCurrent: readonly string[] = [],
): { payloads: string[]; fingerprint: string } | null {
  if (!hasTable(db)) return null;
  const stamp = db.prepare(`SELECT format, built_with AS builtWith, fingerprint FROM ${TABLE} WHERE scope = ?`);
  const payload = db.prepare(`SELECT payload FROM ${TABLE} WHERE scope = ?`).pluck();
  let fingerprint: string | undefined;
  for (const scope of [...scopes, ...alsoCurrent]) {
    const row = stamp.get(scope) as { format: number; builtWith: string; fingerprint: string } | undefined;
    if (!row || row.format !== SUMMARY_FORMAT || row.builtWith !== VERSION || row.fingerprint !== (fingerprint ??= recordingFingerprint(db))) return null;
  }
  return { payloads: scopes.map((scope) => payload.get(scope) as string), fingerprint: fingerprint ?? recordingFingerprint(db) };
}

/** Stores the summaries (scope or STEPS_ROW → JSON payload), replacing those there, in one transaction. `db` must be writable. */
export function writeRankSummaries(db: Db, payloads: Record<string, string>): void {
  const fingerprint = recordingFingerprint(db);
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (
      scope TEXT PRIMARY KEY,
      format INTEGER NOT NULL,
      built_with TEXT NOT NULL,
      built_at_ns INTEGER NOT NULL,
      fingerprint TEXT NOT NULL,
      payload TEXT NOT NULL
    )`);
    const put = db.prepare(`INSERT OR REPLACE INTO ${TABLE} (scope, format, built_with, built_at_ns, fingerprint, payload) VALUES (?, ?, ?, ?, ?, ?)`);
    const now = BigInt(Date.now()) * 1_000_000n;
    for (const [scope, payload] of Object.entries(payloads)) put.run(scope, SUMMARY_FORMAT, VERSION, now, fingerprint, payload);
  })();
}

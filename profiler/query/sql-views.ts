// The views the SQL console adds to every recording it opens: the tables
// joined with what a person asks about — kernel names demangled, the
// stream's CUPTI id and kind, the GPU's ordinal, enums by name, times in µs
// — so that a question is a short SELECT. profiler/store/SCHEMA.md ("The SQL
// console's views") documents their columns.
//
// TEMP views on the console's own connection, not part of the file: they
// need no migration, work on every recording whatever its schema version,
// and leave the file as it was (the console opens it read-only). The SQL is
// plain SQLite (no functions of ours), so the same DDL run in the `sqlite3`
// shell gives the same views (the tests compare the two).
//
// Naming: each view's id column is `<item>_id` (contract/sql.ts
// SQL_ITEM_COLUMNS), which makes it a link to the timeline in the Query tab;
// times keep their exact `start_ns`/`end_ns` beside the µs (an index or a
// join on time wants the integers).
import { SQL_ITEM_COLUMNS, SQL_VIEWS, type SqlViewName } from '../contract/sql.ts';
import { COPY_KIND_NAMES, MEMORY_KIND_NAMES } from '../cuda/cupti-kinds.ts';
import { ApiDomain, StreamFlags } from '../store/enums.ts';
import { streamKind, SYNC_TYPE_NAMES } from './item-kinds.ts';

/** A SQL string literal. */
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** `CASE expr WHEN k THEN 'name' … END` from a table of names (NULL for a value without one). */
function caseOf(expr: string, names: Record<number, string>): string {
  const whens = Object.entries(names).map(([value, name]) => `WHEN ${Number(value)} THEN ${literal(name)}`);
  return `CASE ${expr} ${whens.join(' ')} END`;
}

/**
 * The stream kind the timeline labels a stream with (contract/streams.ts
 * streamKind), for every combination of the flag bits it reads: one
 * definition, evaluated here rather than written again in SQL.
 */
function streamKindCase(flags: string): string {
  const bits = Object.values(StreamFlags).reduce((a, b) => a | b, 0);
  const names: Record<number, string> = {};
  for (let f = 0; f <= bits; f++) names[f] = streamKind(f);
  return caseOf(`(${flags} & ${bits})`, names);
}

const DOMAIN_NAMES: Record<number, string> = { [ApiDomain.Runtime]: 'runtime', [ApiDomain.Driver]: 'driver' };

/** Times of a row aliased `t` in µs (REAL), and the exact ns. */
const times = (t: string, end = `${t}.end_ns`) =>
  `${t}.start_ns / 1e3 AS start_us, ${end} / 1e3 AS end_us, (${end} - ${t}.start_ns) / 1e3 AS duration_us, ${t}.start_ns AS start_ns, ${end} AS end_ns`;

/** The stream columns of a GPU operation aliased `t` (its stream `s`, device `d`). */
const onStream = (t: string) =>
  `s.pid AS pid, d.ordinal AS gpu, ${t}.device_id AS device_id, s.cupti_stream_id AS stream, ${t}.stream_id AS stream_id, ` +
  `${streamKindCase('s.flags')} AS stream_kind`;
const streamJoins = (t: string) => `LEFT JOIN streams s ON s.id = ${t}.stream_id LEFT JOIN devices d ON d.id = ${t}.device_id`;

const id = SQL_ITEM_COLUMNS;

/** Each view's SELECT (their names, what each is, and their order: contract/sql.ts SQL_VIEWS). */
const SELECTS: Record<SqlViewName, string> = {
  kernel_view: `SELECT k.id AS ${id.kernels}, coalesce(n.demangled, n.value) AS name, n.value AS stored_name, ${onStream('k')},
  ${times('k')}, k.correlation_id AS correlation_id,
  k.grid_x * k.grid_y * k.grid_z AS blocks, k.block_x * k.block_y * k.block_z AS threads_per_block,
  k.registers_per_thread AS registers_per_thread, k.static_shared_bytes + k.dynamic_shared_bytes AS shared_bytes
FROM kernels k LEFT JOIN strings n ON n.id = k.name_id ${streamJoins('k')}`,
  copy_view: `SELECT m.id AS ${id.memcpys}, ${caseOf('m.copy_kind', COPY_KIND_NAMES)} AS kind,
  ${caseOf('m.src_kind', MEMORY_KIND_NAMES)} AS src_kind, ${caseOf('m.dst_kind', MEMORY_KIND_NAMES)} AS dst_kind,
  m.bytes AS bytes, m.is_async AS is_async, ${onStream('m')}, ${times('m')},
  CASE WHEN m.end_ns > m.start_ns THEN m.bytes * 1.0 / (m.end_ns - m.start_ns) END AS gb_per_s,
  m.correlation_id AS correlation_id, m.src_device_id AS src_device_id, m.dst_device_id AS dst_device_id
FROM memcpys m ${streamJoins('m')}`,
  memset_view: `SELECT m.id AS ${id.memsets}, m.bytes AS bytes, m.value AS value, ${caseOf('m.memory_kind', MEMORY_KIND_NAMES)} AS memory_kind,
  m.is_async AS is_async, ${onStream('m')}, ${times('m')}, m.correlation_id AS correlation_id
FROM memsets m ${streamJoins('m')}`,
  sync_view: `SELECT y.id AS ${id.syncs}, ${caseOf('y.sync_type', SYNC_TYPE_NAMES)} AS sync_type, y.pid AS pid,
  s.cupti_stream_id AS stream, y.stream_id AS stream_id, y.event_id AS event_id, ${times('y')}, y.correlation_id AS correlation_id
FROM syncs y LEFT JOIN streams s ON s.id = y.stream_id`,
  api_view: `SELECT a.id AS ${id.api_calls}, n.value AS name, a.pid AS pid, a.tid AS tid, th.name AS thread,
  ${caseOf('a.domain', DOMAIN_NAMES)} AS domain, ${times('a')}, a.correlation_id AS correlation_id, a.return_value AS return_value
FROM api_calls a LEFT JOIN strings n ON n.id = a.name_id LEFT JOIN threads th ON th.pid = a.pid AND th.tid = a.tid`,
  // An instantaneous marker, or a range never closed: end_ns NULL, no duration.
  nvtx_view: `SELECT r.id AS ${id.nvtx_ranges}, n.value AS name, dn.value AS domain, r.pid AS pid, r.tid AS tid, ${times('r')}, r.payload AS payload
FROM nvtx_ranges r LEFT JOIN strings n ON n.id = r.name_id LEFT JOIN strings dn ON dn.id = r.domain_id`,
  // Every GPU operation, one id column set per row (the others NULL):
  // a kernel's name, a copy's kind (HtoD, …), 'memset'.
  operation_view: `SELECT 'kernel' AS kind, ${id.kernels}, NULL AS ${id.memcpys}, NULL AS ${id.memsets}, name, NULL AS bytes,
  pid, gpu, device_id, stream, stream_id, stream_kind, start_us, end_us, duration_us, start_ns, end_ns FROM kernel_view
UNION ALL SELECT 'memcpy', NULL, ${id.memcpys}, NULL, kind, bytes,
  pid, gpu, device_id, stream, stream_id, stream_kind, start_us, end_us, duration_us, start_ns, end_ns FROM copy_view
UNION ALL SELECT 'memset', NULL, NULL, ${id.memsets}, 'memset', bytes,
  pid, gpu, device_id, stream, stream_id, stream_kind, start_us, end_us, duration_us, start_ns, end_ns FROM memset_view`,
};

/** The DDL that creates them all as TEMP views (the console runs it; so can the `sqlite3` shell). */
export function sqlViewsDdl(): string {
  return SQL_VIEWS.map((v) => `CREATE TEMP VIEW ${v.name} AS\n${SELECTS[v.name]};`).join('\n');
}

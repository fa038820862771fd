// CUDA graph ids and nodes of the operations graph launches ran (graphs.ts):
// read for those operations alone, by one range scan of a table's primary
// key, so that a recording without a graph launch reads none of them.
import type { Db } from '../../store/database.ts';

/** An operation's row: its id (kernels.id, memcpys.id, memsets.id), its graph's id, its node's id (kernels only, else null). */
export type GraphRow = [id: number, graphId: number, node: number | null];

/** The rows of `table` with ids in [first, last] that a graph launch ran (graph_id set), in id order, read as they are iterated. */
export type GraphRows = (table: 'kernels' | 'memcpys' | 'memsets', first: number, last: number) => Iterable<GraphRow>;

/** The graph rows of `db`. */
export function graphRows(db: Db): GraphRows {
  return (table, first, last) => {
    // Copies and memsets keep their graph's id only (SCHEMA.md, "CUDA graphs").
    const node = table === 'kernels' ? 'graph_node_id' : 'NULL';
    return db
      .prepare(`SELECT id, graph_id, ${node} FROM ${table} WHERE id BETWEEN ? AND ? AND graph_id IS NOT NULL ORDER BY id`)
      .raw()
      .iterate(first, last) as Iterable<GraphRow>;
  };
}

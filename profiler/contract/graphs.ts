// CUDA graph launches as the views say them. A cudaGraphLaunch runs every
// node of an instantiated graph in one call: CUPTI reports each kernel, copy
// and memset it ran as an operation of its own, with the call's correlation
// id, the graph's id and (kernels) the node's (profiler/store/SCHEMA.md,
// "CUDA graphs"). The details panel shows
// an operation's place in its launch and a launch call's operations
// (ItemDetails.graph, query/item-details.ts); the report counts the launches
// (Report.graphs, analysis/graphs.ts). The sentences are written here, once,
// for the panel, the details' fields and the report alike.
import type { ItemRef } from './api-schema.ts';

/**
 * One launch of a CUDA graph, seen from one of its GPU operations or from
 * the call that launched it (ItemDetails.graph).
 */
export interface GraphLaunchInfo {
  /** The graph (graph_id of the operation; of a call, its operations'), as CUPTI numbers graphs. */
  graphId: number;
  /** The operation's node (kernels.graph_node_id); null for a call, a copy or a memset (no node id stored). */
  nodeId: number | null;
  /** The call that launched the graph, null where the recording has no call with the operation's correlation id. */
  call: { ref: ItemRef; name: string } | null;
  /** The launch's GPU operations, by kind. */
  kernels: number;
  memcpys: number;
  memsets: number;
  /** Distinct nodes among them: kernel nodes (copies and memsets have no node id stored). */
  nodes: number;
  /** An operation's place among the launch's operations in start order, from 1; null for a call. */
  position: number | null;
}

/** One graph's launches in a report's scope (GraphLaunches.graphs). */
export interface GraphSummary {
  /** null: operations of graph launches whose graph id was not recorded (an imported trace). */
  graphId: number | null;
  /** Calls that launched it. */
  launches: number;
  kernels: number;
  memcpys: number;
  memsets: number;
  /** Distinct node ids among its operations: its kernel nodes (copies and memsets have none stored). */
  nodes: number;
}

/** The CUDA graph launches of a scope: the operations they ran and their graphs (report --json `graphs`). */
export interface GraphLaunches {
  /** cudaGraphLaunch / cuGraphLaunch calls that ran GPU operations in the scope. */
  launches: number;
  kernels: number;
  memcpys: number;
  memsets: number;
  /** By graph id; ops without one last. */
  graphs: GraphSummary[];
}

const count = (n: number) => n.toLocaleString('en-US');

function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** "40 kernels", "40 kernels and 2 copies", "3 kernels, 1 copy and 1 memset". */
export function graphOpsText(g: { kernels: number; memcpys: number; memsets: number }): string {
  const parts = [
    g.kernels > 0 || (g.memcpys === 0 && g.memsets === 0) ? plural(g.kernels, 'kernel') : null,
    g.memcpys > 0 ? plural(g.memcpys, 'copy', 'copies') : null,
    g.memsets > 0 ? plural(g.memsets, 'memset') : null,
  ].filter((p): p is string => p !== null);
  return parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

/**
 * The launch in one line. An operation: "graph 2, node 8589934593,
 * launched by cudaGraphLaunch (call id 5676) with 40 kernels". A call:
 * "graph 2: 40 kernels (40 nodes)".
 */
export function graphLaunchText(g: GraphLaunchInfo): string {
  const ops = graphOpsText(g);
  if (g.position === null) return `graph ${g.graphId}: ${ops}${g.nodes > 0 ? ` (${plural(g.nodes, 'node')})` : ''}`;
  const node = g.nodeId === null ? '' : `, node ${g.nodeId}`;
  const by = g.call ? `launched by ${g.call.name} (call id ${g.call.ref.id})` : 'launched by a call the recording does not hold';
  return `graph ${g.graphId}${node}, ${by} with ${ops}`;
}

/** The report's line: "12,000 kernels from 300 CUDA graph launches (graph 2: 40 nodes)". */
export function graphLaunchesText(g: GraphLaunches): string {
  const graphs = g.graphs.map((s) =>
    s.graphId === null ? `${plural(s.kernels + s.memcpys + s.memsets, 'operation')} of no recorded graph` : `graph ${s.graphId}: ${plural(s.nodes, 'node')}`,
  );
  return `${graphOpsText(g)} from ${plural(g.launches, 'CUDA graph launch', 'CUDA graph launches')} (${graphs.join('; ')})`;
}

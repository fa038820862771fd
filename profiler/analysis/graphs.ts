// CUDA graph launches in a scope: how many, the operations they ran, and
// which graphs (the report's line, contract/graphs.ts).
//
// A cudaGraphLaunch runs every node of an instantiated graph, and CUPTI
// reports each kernel, copy and memset as an operation of its own with the
// call's correlation id. So nothing else in the analysis has to know about
// graphs: host.ts maps each operation to the call with its correlation id,
// many to one, and a graph's operations belong to their cudaGraphLaunch as
// a kernel to its cudaLaunchKernel; the dependency view and the replay
// issue them with that call, in start order on their stream, which on a
// graph's stream is the graph's own order. What only the stored ids say is
// which graph and which node: read (load/graphs.ts) for the operations of
// graph launch calls alone, so that a recording without one pays a look at
// its call names and nothing more.
import type { GraphLaunches, GraphSummary } from '../contract/graphs.ts';
import { isGraphLaunch } from '../cuda/call-families.ts';
import type { Host } from './host.ts';
import type { GraphRows } from './load/graphs.ts';
import { OpKind, type Trace } from './trace.ts';

export const NO_GRAPH_LAUNCHES: GraphLaunches = { launches: 0, kernels: 0, memcpys: 0, memsets: 0, graphs: [] };

const TABLES = [
  [OpKind.Kernel, 'kernels'],
  [OpKind.Memcpy, 'memcpys'],
  [OpKind.Memset, 'memsets'],
] as const;

/** The graph launches among the trace's operations (host.opCall), with their graphs' ids and nodes read by `rows` (load/graphs.ts graphRows). */
export function graphLaunchesOf(rows: GraphRows, trace: Trace, host: Host): GraphLaunches {
  const launchNames = new Set<number>();
  for (const [id, name] of host.names) if (isGraphLaunch(name)) launchNames.add(id);
  if (launchNames.size === 0) return NO_GRAPH_LAUNCHES;

  const { ops } = trace;
  const { opCall } = host;
  const { nameId } = host.calls;
  const launched: number[][] = [[], [], [], []]; // by OpKind
  for (let i = 0; i < ops.length; i++) {
    const k = opCall[i]!;
    if (k >= 0 && launchNames.has(nameId[k]!)) launched[ops.kind[i]!]!.push(i);
  }

  interface Acc {
    graphId: number | null;
    calls: Set<number>;
    counts: [number, number, number, number];
    nodes: Set<number>;
  }
  const byGraph = new Map<number | null, Acc>();
  const acc = (graphId: number | null) => {
    let a = byGraph.get(graphId);
    if (!a) byGraph.set(graphId, (a = { graphId, calls: new Set(), counts: [0, 0, 0, 0], nodes: new Set() }));
    return a;
  };
  const calls = new Set<number>();
  for (const [kind, table] of TABLES) {
    const list = launched[kind]!;
    if (list.length === 0) continue;
    // The launched operations' rows by id, merged with the ops sorted the same way: one
    // range scan of the primary key however many operations there are.
    list.sort((a, b) => ops.rowId[a]! - ops.rowId[b]!);
    const it = rows(table, ops.rowId[list[0]!]!, ops.rowId[list.at(-1)!]!)[Symbol.iterator]();
    let row = it.next();
    for (const i of list) {
      const id = ops.rowId[i]!;
      while (!row.done && row.value[0] < id) row = it.next();
      const hit = !row.done && row.value[0] === id ? row.value : null;
      const a = acc(hit ? hit[1] : null);
      a.calls.add(opCall[i]!);
      a.counts[kind]++;
      if (hit && hit[2] !== null) a.nodes.add(hit[2]);
      calls.add(opCall[i]!);
    }
    // Stop the read: its rows past the last op are not needed.
    it.return?.();
  }
  const graphs: GraphSummary[] = [...byGraph.values()]
    .sort((a, b) => (a.graphId ?? Infinity) - (b.graphId ?? Infinity))
    .map((a) => ({
      graphId: a.graphId,
      launches: a.calls.size,
      kernels: a.counts[OpKind.Kernel],
      memcpys: a.counts[OpKind.Memcpy],
      memsets: a.counts[OpKind.Memset],
      nodes: a.nodes.size,
    }));
  const sum = (f: (g: GraphSummary) => number) => graphs.reduce((s, g) => s + f(g), 0);
  return { launches: calls.size, kernels: sum((g) => g.kernels), memcpys: sum((g) => g.memcpys), memsets: sum((g) => g.memsets), graphs };
}

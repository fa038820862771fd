// Schema version 11: CPU operations of the framework — PyTorch's operators
// (`aten::mm`, `aten::linear`, `autograd::engine::evaluate_function: …`)
// and Python functions, as a PyTorch profiler (Kineto) trace holds them. They
// used to be imported as NVTX ranges, where they are not what a range is:
// `--range`, the iterations and the ranges list are the program's own
// annotations (NVTX, `record_function`, `ProfilerStep#N`), and thousands of
// `aten::` names drowned them (`--range aten::mm` was offered, a step's
// `aten::add_` repeated enough to be picked as the iteration). A table of
// their own keeps them out of every range scope without the range queries
// having to know which domains are not ranges.
//
// The collector records CUDA, not the framework: only imported traces fill
// it; older recordings get the empty table.
export const version = 11;

export const sql = /* sql */ `
CREATE TABLE cpu_ops (
  id         INTEGER PRIMARY KEY,
  start_ns   INTEGER NOT NULL,
  end_ns     INTEGER NOT NULL,
  pid        INTEGER NOT NULL,
  tid        INTEGER NOT NULL,
  kind       INTEGER NOT NULL,    -- 1 operator (Kineto's cpu_op), 2 Python function (python_function)
  name_id    INTEGER NOT NULL REFERENCES strings(id),
  forward_id INTEGER              -- a backward operator: the cpu_ops.id of the forward operator autograd made it for (Kineto's fwdbwd flow); else NULL
);
`;

// Schema version 9: recordings merged into one (`streamscope merge`, issue
// 13). A merged recording keeps where each of its rows came from: one
// `sources` row per recording merged (with the recording's meta, and the
// shift its times were given to put every host on one clock, with how well
// that shift lines up the job's collectives), the rowid range each source
// fills in each table (`source_rows`: merge copies a source's rows in one
// run), and per process its source and, where merge had to renumber it
// (two hosts' processes with the same pid), the pid it had there.
//
// Empty in a recording that was never merged; older recordings get the
// empty tables and NULL columns. profiler/merge/README.md says how merge
// fills them, SCHEMA.md what each column means.
export const version = 9;

export const sql = /* sql */ `
CREATE TABLE sources (
  id               INTEGER PRIMARY KEY,  -- 1, 2, … : the inputs in the order given, each followed by the sources it held
  parent_id        INTEGER,              -- NULL: an input of the merge that wrote this file; else the merged input it came in (sources.id)
  file             TEXT NOT NULL,        -- the recording's path when it was merged (absolute)
  host             TEXT,                 -- its meta host
  meta             TEXT NOT NULL,        -- its meta table, as a JSON object
  clock            TEXT NOT NULL,        -- how its times were aligned: 'reference', 'collectives', 'same-host', 'wall-clock'
  shift_ns         INTEGER NOT NULL,     -- added to each of its times: its own time t is t + shift_ns here
  correction_ns    INTEGER NOT NULL,     -- the part of shift_ns that corrects its host's clock against the reference (0: reference, wall clock)
  collectives      INTEGER NOT NULL,     -- its NCCL collectives matched with other recordings' ranks
  residual_ns      INTEGER,              -- after the shift: median |end − the other ranks' end| of those collectives (NULL: none matched)
  residual_max_ns  INTEGER               -- and the largest
);

CREATE TABLE source_rows (
  source_id  INTEGER NOT NULL,  -- sources.id
  table_name TEXT NOT NULL,     -- kernels, api_calls, contexts, streams, …
  first_id   INTEGER NOT NULL,  -- its rows are the table's ids first_id..last_id (all of them: one run per source)
  last_id    INTEGER NOT NULL,
  rows       INTEGER NOT NULL,
  PRIMARY KEY (source_id, table_name)
) WITHOUT ROWID;

ALTER TABLE processes ADD COLUMN source_id INTEGER;     -- merged recordings: the recording it was recorded in (sources.id, never a merged one)
ALTER TABLE processes ADD COLUMN original_pid INTEGER;  -- its pid there, when merge gave it another (NULL: the same)
`;

// Schema version 10: what an NVTX range or mark carried in NVTX's payload
// extension (issue 13, part 3). NCCL (2.19 and later) attaches one to each
// collective's range — communicator, message size in bytes, reduction, root
// or peer — in a layout it registers with NVTX; the collector decodes it
// with that registration (native/collector/nvtx_payload.h) and the ingest
// stores the scalar fields as one JSON object named by the program's own
// entry names: {"NCCL communicator ID": "18364758544493064720",
// "Message size [bytes]": 16777216, "Reduction operation": "Sum"}.
// NULL: the range carried none, or was recorded before this version.
export const version = 10;

export const sql = /* sql */ `
ALTER TABLE nvtx_ranges ADD COLUMN payload TEXT;
`;

// Schema version 2: which API call created each stream.
//
// CUPTI's STREAM activity records carry the correlation id of the call that
// created the stream (cudaStreamCreate*, cuStreamCreate*); streams the CUDA
// runtime creates for itself, or per-thread default streams, are told apart
// by it. NULL: unknown (recordings of version 1, CUPTI without STREAM records).
export const version = 2;

export const sql = /* sql */ `
ALTER TABLE streams ADD COLUMN created_by_correlation_id INTEGER;
`;

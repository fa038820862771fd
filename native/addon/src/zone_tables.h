// zones.table_id of each timeline table, as SCHEMA.md ("Zones") and
// profiler/store/zone-tables.ts define them: stored in every recording, so
// they never change. The ingest writes them; the column loader reads the
// zones' row counts by them.
#pragma once

namespace streamscope::addon::zone_table {

inline constexpr int kKernels = 1;
inline constexpr int kMemcpys = 2;
inline constexpr int kMemsets = 3;
inline constexpr int kSyncs = 4;
inline constexpr int kApiCalls = 5;
inline constexpr int kNvtxRanges = 6;

}  // namespace streamscope::addon::zone_table

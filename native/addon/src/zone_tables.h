// The zone vocabulary shared with the TypeScript side (SCHEMA.md "Zones",
// profiler/store/zone-tables.ts): zones.table_id of each timeline table,
// the most rows in one zone, and the lane of a host thread. Stored in every
// recording, so they never change; test/contract/shared-constants.test.ts
// reads this header and holds the two sides together. The ingest writes
// zones with them; the column loader reads the zones' row counts by
// table_id.
#pragma once

#include <cstdint>

namespace streamscope::addon::zone_table {

inline constexpr int kKernels = 1;
inline constexpr int kMemcpys = 2;
inline constexpr int kMemsets = 3;
inline constexpr int kSyncs = 4;
inline constexpr int kApiCalls = 5;
inline constexpr int kNvtxRanges = 6;

// Rows per zone at most (ZONE_ROWS).
inline constexpr int64_t kZoneRows = 4096;

// Lane of a host thread in `zones` (THREAD_LANE_FACTOR): pid and tid are
// both below Linux's pid_max limit of 2^22, so the pair fits an exact JS
// number (profiler/store/zones.ts threadLane).
inline constexpr int64_t kThreadLaneFactor = 4194304;
inline int64_t threadLane(uint32_t pid, uint32_t tid) { return int64_t{pid} * kThreadLaneFactor + tid; }

}  // namespace streamscope::addon::zone_table

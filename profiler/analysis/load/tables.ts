// The small tables a trace holds besides its operations (trace.ts): meta,
// devices, streams and strings, read once per file and shared by every
// scope of it; and the devices' PCIe links as stored, for the pinned-copy
// bandwidth (bandwidth.ts) where the loaded devices lack them.
import type { Db } from '../../store/database.ts';
import { readMeta } from '../../store/database.ts';

export interface DeviceRow {
  id: number;
  uuid: string | null;
  ordinal: number | null;
  name: string | null;
  ccMajor: number | null;
  ccMinor: number | null;
  smCount: number | null;
  asyncEngineCount: number | null;
  concurrentKernels: number | null;
  totalMemoryBytes: number | null;
  maxThreadsPerSm: number | null;
  maxSharedMemoryPerSm: number | null;
  maxRegistersPerSm: number | null;
  maxBlocksPerSm: number | null;
  pcieGeneration: number | null;
  pcieWidth: number | null;
}

export interface StreamRow {
  id: number;
  pid: number;
  contextId: number;
  deviceId: number | null;
  cuptiStreamId: number;
  flags: number;
  priority: number | null;
}

/** What a trace holds besides its operations: small tables, read once per file and shared by every scope of it. */
export interface TraceTables {
  meta: Map<string, string>;
  devices: DeviceRow[];
  streams: StreamRow[];
  strings: Map<number, string>;
  demangled: Map<number, string>;
}

export function readTraceTables(db: Db): TraceTables {
  const meta = readMeta(db);
  const devices = db
    .prepare(
      `SELECT id, uuid, ordinal, name, cc_major AS ccMajor, cc_minor AS ccMinor,
      sm_count AS smCount, async_engine_count AS asyncEngineCount, concurrent_kernels AS concurrentKernels,
      total_memory_bytes AS totalMemoryBytes, max_threads_per_sm AS maxThreadsPerSm,
      max_shared_memory_per_sm AS maxSharedMemoryPerSm, max_registers_per_sm AS maxRegistersPerSm,
      max_blocks_per_sm AS maxBlocksPerSm, pcie_generation AS pcieGeneration, pcie_width AS pcieWidth FROM devices ORDER BY id`,
    )
    .all() as DeviceRow[];
  const streams = db
    .prepare(
      `SELECT id, pid, context_id AS contextId, device_id AS deviceId,
      cupti_stream_id AS cuptiStreamId, flags, priority FROM streams ORDER BY id`,
    )
    .all() as StreamRow[];
  const strings = new Map<number, string>();
  const demangled = new Map<number, string>();
  for (const s of db.prepare('SELECT id, value, demangled FROM strings').raw().iterate() as Iterable<[number, string, string | null]>) {
    strings.set(s[0], s[1]);
    if (s[2] !== null) demangled.set(s[0], s[2]);
  }
  return { meta, devices, streams, strings, demangled };
}

/** A device's PCIe link as stored (devices.pcie_generation, pcie_width: schema v4). */
export interface PcieLink {
  id: number;
  generation: number | null;
  width: number | null;
}

/** Every device's PCIe link; none from a file older than schema v4, which has no such columns. */
export function readPcieLinks(db: Db): PcieLink[] {
  try {
    return db.prepare('SELECT id, pcie_generation AS generation, pcie_width AS width FROM devices').all() as PcieLink[];
  } catch {
    return [];
  }
}

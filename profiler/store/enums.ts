// Integer enumerations stored in recordings (and, with the same values, in
// the record stream). Values never change meaning; a retired value stays
// reserved. CUPTI-defined enums stored as is (copy_kind, memory kinds,
// sync_type) keep CUPTI's values; their names are here and in SCHEMA.md.

import { StreamFlags } from '../contract/streams.ts';

/** streams.flags bits: defined with the stream kinds they make (contract/streams.ts), which the renderer may import. */
export { StreamFlags };
export const STREAM_FLAG_NAMES: readonly (readonly [number, string])[] = [
  [StreamFlags.LegacyDefault, 'legacy-default'],
  [StreamFlags.NonBlocking, 'non-blocking'],
  [StreamFlags.PerThreadDefault, 'per-thread-default'],
  [StreamFlags.Implicit, 'implicit'],
];

/** api_calls.domain. */
export const ApiDomain = { Runtime: 1, Driver: 2 } as const;

/** dropped_records.source (4: records CUPTI delivered without GPU timestamps, e.g. in flight at exit). */
export const DropSource = { Cupti: 1, BufferCap: 2, Writer: 3, Incomplete: 4 } as const;

/** collector_errors.code. */
export const CollectorErrorCode = {
  CuptiSubscribe: 1,
  CuptiVersion: 2,
  ActivityEnable: 3,
  Output: 4,
  CallbacksTaken: 5,
  Cupti: 6,
} as const;

/** CUPTI memcpy kinds (memcpys.copy_kind), named as CUPTI and Kineto name them. */
export const COPY_KIND_NAMES: Record<number, string> = {
  1: 'HtoD',
  2: 'DtoH',
  3: 'HtoA',
  4: 'AtoH',
  5: 'AtoA',
  6: 'AtoD',
  7: 'DtoA',
  8: 'DtoD',
  9: 'HtoH',
  10: 'PtoP',
};

/** CUPTI memory kinds (memcpys.src_kind/dst_kind, memsets.memory_kind). */
export const MEMORY_KIND_NAMES: Record<number, string> = {
  0: 'unknown',
  1: 'pageable',
  2: 'pinned',
  3: 'device',
  4: 'array',
  5: 'managed',
  6: 'device static',
  7: 'managed static',
};

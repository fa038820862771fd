// Integer enumerations stored in recordings (and, with the same values, in
// the record stream). Values never change meaning; a retired value stays
// reserved. CUPTI-defined enums stored as is (copy_kind, memory kinds,
// sync_type) keep CUPTI's values; copy and memory kinds are named in
// cuda/cupti-kinds.ts, all of them in SCHEMA.md.

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

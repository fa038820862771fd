// CUPTI's enumerations of memory copies, stored in recordings as CUPTI
// gives them (memcpys.copy_kind, src_kind, dst_kind; memsets.memory_kind;
// CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind in cupti_activity.h),
// named as CUPTI and Kineto name them.

/** CUPTI memcpy kinds (memcpys.copy_kind). */
export const CopyKind = { HtoD: 1, DtoH: 2, HtoA: 3, AtoH: 4, AtoA: 5, AtoD: 6, DtoA: 7, DtoD: 8, HtoH: 9, PtoP: 10 } as const;

/** Each copy kind's name, by its value. */
export const COPY_KIND_NAMES: Record<number, string> = Object.fromEntries(Object.entries(CopyKind).map(([name, value]) => [value, name]));

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

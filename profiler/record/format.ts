// The record stream layout, TypeScript side. Mirrors
// native/collector/record_format.h (the documentation of the format lives
// there); test/contract/record-stream.test.ts checks the two agree by
// decoding a stream written by the C++ encoder.
//
// Fields are listed in struct order; offsets are derived by natural
// alignment, exactly as the C++ structs are laid out (they have no implicit
// padding: every struct there static_asserts its size).

export const MAGIC = 'SSCOPERS';
export const FORMAT_VERSION = 1;
export const FILE_HEADER_BYTES = 64;
export const RECORD_HEADER_BYTES = 8;
/** "Not applicable" id value (kNone). */
export const NONE_ID = 0xffffffff;

export type FieldType = 'u8' | 'u16' | 'u32' | 'i32' | 'i64' | 'u64' | 'uuid';

const FIELD_BYTES: Record<FieldType, number> = { u8: 1, u16: 2, u32: 4, i32: 4, i64: 8, u64: 8, uuid: 16 };
const FIELD_ALIGN: Record<FieldType, number> = { u8: 1, u16: 2, u32: 4, i32: 4, i64: 8, u64: 8, uuid: 1 };

export interface FieldLayout {
  readonly name: string;
  readonly type: FieldType;
  readonly offset: number;
}

export interface RecordLayout {
  readonly kind: number;
  readonly name: KindName;
  /** Size of the fixed part, header included (sizeof the C++ struct). */
  readonly size: number;
  readonly fields: readonly FieldLayout[];
}

/** Kind numbers are stored in files: never renumber. */
export const Kind = {
  String: 1,
  Process: 2,
  Device: 3,
  Context: 4,
  Stream: 5,
  Kernel: 6,
  Memcpy: 7,
  Memset: 8,
  Synchronization: 9,
  CudaEvent: 10,
  ApiCall: 11,
  Marker: 12,
  Overhead: 13,
  Dropped: 14,
  Error: 15,
  Flush: 16,
  End: 17,
  ProcessEnv: 18,
  MarkerPayload: 19,
} as const;
export type KindName = keyof typeof Kind;

function layout(name: KindName, fields: [string, FieldType][]): RecordLayout {
  let offset = RECORD_HEADER_BYTES;
  const out: FieldLayout[] = [];
  for (const [fieldName, type] of fields) {
    const align = FIELD_ALIGN[type];
    if (offset % align !== 0) throw new Error(`record layout ${name}.${fieldName} is misaligned`);
    out.push({ name: fieldName, type, offset });
    offset += FIELD_BYTES[type];
  }
  if (offset % 8 !== 0) throw new Error(`record layout ${name} is not a multiple of 8 bytes`);
  return { kind: Kind[name], name, size: offset, fields: out };
}

const u32 = (...names: string[]): [string, FieldType][] => names.map((n) => [n, 'u32']);
const i32 = (...names: string[]): [string, FieldType][] => names.map((n) => [n, 'i32']);

/** The kinds of variable size: String (id, length, then bytes) and MarkerPayload (its fields follow). */
export type VariableKindName = 'String' | 'MarkerPayload';
export type FixedKindName = Exclude<KindName, VariableKindName>;

/** Fixed-size records. */
export const LAYOUTS: Readonly<Record<FixedKindName, RecordLayout>> = {
  Process: layout(
    'Process',
    u32('pid', 'ppid', 'command_sid', 'executable_sid', 'hostname_sid', 'driver_version', 'runtime_version', 'cupti_version', 'cupti_api_version', 'reserved'),
  ),
  Device: layout('Device', [
    ...u32('device_id', 'name_sid'),
    ['uuid', 'uuid'],
    ...u32(
      'cc_major',
      'cc_minor',
      'sm_count',
      'async_engine_count',
      'concurrent_kernels',
      'pci_domain',
      'pci_bus',
      'pci_device',
      'core_clock_khz',
      'memory_clock_khz',
      'memory_bus_width_bits',
      'l2_cache_bytes',
      'max_threads_per_sm',
      'max_shared_memory_per_sm',
      'max_registers_per_sm',
      'max_blocks_per_sm',
    ),
    ['total_memory_bytes', 'u64'],
  ]),
  Context: layout('Context', u32('context_id', 'device_id', 'null_stream_id', 'reserved')),
  Stream: layout('Stream', [...u32('context_id', 'stream_id', 'device_id', 'flags'), ['priority', 'i32'], ['correlation_id', 'u32'], ['created_ns', 'i64']]),
  Kernel: layout('Kernel', [
    ['start_ns', 'i64'],
    ['end_ns', 'i64'],
    ...u32('device_id', 'context_id', 'stream_id', 'correlation_id'),
    ...i32('grid_x', 'grid_y', 'grid_z', 'block_x', 'block_y', 'block_z', 'static_shared_bytes', 'dynamic_shared_bytes'),
    ...u32('local_memory_per_thread', 'name_sid'),
    ['registers_per_thread', 'u16'],
    ['launch_type', 'u8'],
    ['is_device_launched', 'u8'],
    ...u32('graph_id', 'cluster_x', 'cluster_y', 'cluster_z', 'channel_id'),
    ['graph_node_id', 'u64'],
  ]),
  Memcpy: layout('Memcpy', [
    ['start_ns', 'i64'],
    ['end_ns', 'i64'],
    ['bytes', 'u64'],
    ...u32('device_id', 'context_id', 'stream_id', 'correlation_id'),
    ['copy_kind', 'u8'],
    ['src_kind', 'u8'],
    ['dst_kind', 'u8'],
    ['flags', 'u8'],
    ...u32('src_device_id', 'dst_device_id', 'graph_id', 'channel_id', 'reserved'),
  ]),
  Memset: layout('Memset', [
    ['start_ns', 'i64'],
    ['end_ns', 'i64'],
    ['bytes', 'u64'],
    ...u32('device_id', 'context_id', 'stream_id', 'correlation_id', 'value'),
    ['flags', 'u16'],
    ['memory_kind', 'u16'],
    ...u32('graph_id', 'channel_id'),
  ]),
  Synchronization: layout('Synchronization', [
    ['start_ns', 'i64'],
    ['end_ns', 'i64'],
    ...u32('type', 'context_id', 'stream_id', 'event_id', 'correlation_id', 'return_value'),
  ]),
  CudaEvent: layout('CudaEvent', [['device_ns', 'i64'], ...u32('correlation_id', 'context_id', 'stream_id', 'event_id', 'device_id', 'reserved')]),
  ApiCall: layout('ApiCall', [['start_ns', 'i64'], ['end_ns', 'i64'], ...u32('domain', 'cbid', 'thread_id', 'correlation_id', 'return_value', 'name_sid')]),
  Marker: layout('Marker', [['timestamp_ns', 'i64'], ...u32('id', 'flags', 'object_kind', 'thread_id', 'name_sid', 'domain_sid')]),
  Overhead: layout('Overhead', [['start_ns', 'i64'], ['end_ns', 'i64'], ...u32('overhead_kind', 'object_kind', 'object_id', 'correlation_id')]),
  Dropped: layout('Dropped', [['count', 'u64'], ...u32('source', 'context_id', 'stream_id', 'reserved')]),
  Error: layout('Error', u32('code', 'message_sid')),
  Flush: layout('Flush', [...u32('reason', 'signal'), ['at_ns', 'i64'], ['records_so_far', 'u64']]),
  End: layout('End', [...u32('reason', 'reserved'), ['end_ns', 'i64'], ['records_written', 'u64'], ['buffers_completed', 'u64']]),
  ProcessEnv: layout('ProcessEnv', u32('name_sid', 'value_sid')),
};

export const STRING_FIXED_BYTES = 16;
/** MarkerPayload: marker_id u32, field_count u32, schema_id u64, then field_count fields. */
export const MARKER_PAYLOAD_FIXED_BYTES = 24;
/** Each field: name_sid u32, kind u32, value u64 (by kind), label_sid u32, entry_index u32. */
export const MARKER_PAYLOAD_FIELD_BYTES = 24;
export const MARKER_PAYLOAD_MAX_FIELDS = 32;
/** How a MarkerPayload field's 64-bit value reads (record_format.h PayloadValueKind). */
export const PayloadValueKind = { Signed: 1, Unsigned: 2, Float: 3, Enum: 4 } as const;

const BY_KIND = new Map<number, RecordLayout>(Object.values(LAYOUTS).map((l) => [l.kind, l]));
export function layoutOfKind(kind: number): RecordLayout | undefined {
  return BY_KIND.get(kind);
}

export const KIND_NAMES: ReadonlyMap<number, KindName> = new Map(Object.entries(Kind).map(([name, kind]) => [kind, name as KindName]));

// Enumerations the stream shares with the database (same values).
export { ApiDomain, CollectorErrorCode, DropSource, StreamFlags } from '../store/enums.ts';
export const MarkerFlags = { Instantaneous: 1, Start: 2, End: 4 } as const;
export const FlushReason = { Periodic: 1, Signal: 2, ProfilerStop: 3 } as const;

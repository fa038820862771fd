// StreamScope record stream, format version 1 — the one C++ definition.
//
// The collector (running inside the profiled process) writes one file per
// process: a FileHeader followed by records. The TypeScript decoder
// (profiler/record/format.ts) and the native ingest (native/addon) read it.
// test/contract/record-stream.test.ts holds the two sides together: a
// synthetic stream written by this header's encoder must decode back exactly;
// test/contract/shared-constants.test.ts reads this header and compares every
// enum (kinds, stream flags, drop sources, ...) and size with the TypeScript
// values.
//
// Rules that keep old files readable:
//  * Little-endian, every record 8-byte aligned, `size` includes the header.
//  * Kind values and field offsets never change. A new field goes at the end
//    of a record (readers take `size` from the header and ignore the tail they
//    do not know); a new kind gets a new number. Retired kinds stay reserved.
//  * Readers skip records of unknown kind using `size`.
//  * All times are signed nanoseconds relative to FileHeader::origin_ns, so a
//    reader never handles the raw CUPTI timestamps (ns since the epoch, above
//    2^53, not exact as a JS number).
//  * Strings are interned: a String record carries id + UTF-8 bytes and
//    precedes the first record that refers to its id. Id 0 means "no string".
#pragma once

#include <cstddef>
#include <cstdint>

namespace streamscope::rs {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the record stream is little-endian and written with memcpy");

inline constexpr char kMagic[8] = {'S', 'S', 'C', 'O', 'P', 'E', 'R', 'S'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kNone = 0xFFFFFFFFu;  // "not applicable" for ids

// File header flags.
enum HeaderFlags : uint32_t {
  kHeaderDiscard = 1u << 0,  // bench floor mode: activity buffers were thrown away
};

struct FileHeader {
  char magic[8];            // kMagic
  uint32_t format_version;  // kFormatVersion
  uint32_t header_bytes;    // sizeof(FileHeader); records start here
  uint64_t origin_ns;       // CUPTI timestamp all record times are relative to
  uint64_t origin_wall_ns;  // CLOCK_REALTIME at the origin, ns since the epoch
  uint32_t pid;
  uint32_t flags;              // HeaderFlags
  uint32_t collector_version;  // major * 10000 + minor * 100 + patch
  uint32_t reserved[5];
};
static_assert(sizeof(FileHeader) == 64);

// Values are stored in files: never renumber.
enum class Kind : uint16_t {
  String = 1,
  Process = 2,
  Device = 3,
  Context = 4,
  Stream = 5,
  Kernel = 6,
  Memcpy = 7,
  Memset = 8,
  Synchronization = 9,
  CudaEvent = 10,
  ApiCall = 11,
  Marker = 12,
  Overhead = 13,
  Dropped = 14,
  Error = 15,
  Flush = 16,
  End = 17,
  ProcessEnv = 18,
  MarkerPayload = 19,
};

// The kind's name as the format spells it (profiler/record/format.ts uses
// the same names): "Kernel"; nullptr for a value this version does not know.
inline const char* kindName(Kind k) {
  switch (k) {
    case Kind::String: return "String";
    case Kind::Process: return "Process";
    case Kind::Device: return "Device";
    case Kind::Context: return "Context";
    case Kind::Stream: return "Stream";
    case Kind::Kernel: return "Kernel";
    case Kind::Memcpy: return "Memcpy";
    case Kind::Memset: return "Memset";
    case Kind::Synchronization: return "Synchronization";
    case Kind::CudaEvent: return "CudaEvent";
    case Kind::ApiCall: return "ApiCall";
    case Kind::Marker: return "Marker";
    case Kind::Overhead: return "Overhead";
    case Kind::Dropped: return "Dropped";
    case Kind::Error: return "Error";
    case Kind::Flush: return "Flush";
    case Kind::End: return "End";
    case Kind::ProcessEnv: return "ProcessEnv";
    case Kind::MarkerPayload: return "MarkerPayload";
  }
  return nullptr;
}

struct RecordHeader {
  uint16_t kind;      // Kind
  uint16_t reserved;  // 0
  uint32_t size;      // bytes of the whole record, header included; multiple of 8
};
static_assert(sizeof(RecordHeader) == 8);

// Variable size: followed by `length` UTF-8 bytes, zero-padded to 8.
struct StringRecord {
  RecordHeader h;
  uint32_t id;      // >= 1, unique within the file
  uint32_t length;  // bytes that follow
};
static_assert(sizeof(StringRecord) == 16);

// Written at start, and again at exit once the runtime version is known;
// a reader keeps the last one.
struct ProcessRecord {
  RecordHeader h;
  uint32_t pid;
  uint32_t ppid;
  uint32_t command_sid;     // command line, arguments joined by spaces
  uint32_t executable_sid;  // /proc/self/exe
  uint32_t hostname_sid;
  uint32_t driver_version;     // cuDriverGetVersion, e.g. 13000
  uint32_t runtime_version;    // cudaRuntimeGetVersion if the runtime is loaded, else 0
  uint32_t cupti_version;      // cuptiGetVersion (runtime library)
  uint32_t cupti_api_version;  // CUPTI_API_VERSION the collector was built against
  uint32_t reserved;
};
static_assert(sizeof(ProcessRecord) == 48);

struct DeviceRecord {
  RecordHeader h;
  uint32_t device_id;  // CUDA device ordinal in this process
  uint32_t name_sid;
  uint8_t uuid[16];
  uint32_t cc_major;
  uint32_t cc_minor;
  uint32_t sm_count;
  uint32_t async_engine_count;  // copy engines usable concurrently with kernels
  uint32_t concurrent_kernels;  // 1 if kernels of different streams may overlap
  uint32_t pci_domain;
  uint32_t pci_bus;
  uint32_t pci_device;
  uint32_t core_clock_khz;
  uint32_t memory_clock_khz;
  uint32_t memory_bus_width_bits;
  uint32_t l2_cache_bytes;
  uint32_t max_threads_per_sm;
  uint32_t max_shared_memory_per_sm;
  uint32_t max_registers_per_sm;
  uint32_t max_blocks_per_sm;
  uint64_t total_memory_bytes;
};
static_assert(sizeof(DeviceRecord) == 104);

struct ContextRecord {
  RecordHeader h;
  uint32_t context_id;  // CUPTI context id (unique within the process)
  uint32_t device_id;
  uint32_t null_stream_id;  // CUPTI stream id of the legacy default stream
  uint32_t reserved;
};
static_assert(sizeof(ContextRecord) == 24);

// Stream flag bits (stored in SQLite too: never renumber).
enum StreamFlags : uint32_t {
  kStreamLegacyDefault = 1u << 0,     // the NULL stream with legacy semantics
  kStreamNonBlocking = 1u << 1,       // cudaStreamNonBlocking: no implicit sync with the NULL stream
  kStreamPerThreadDefault = 1u << 2,  // cudaStreamPerThread / --default-stream per-thread
  kStreamImplicit = 1u << 3,          // seen only through its operations (created before tracing)
};

struct StreamRecord {
  RecordHeader h;
  uint32_t context_id;
  uint32_t stream_id;       // CUPTI stream id (unique within the process)
  uint32_t device_id;       // kNone: the device of its context
  uint32_t flags;           // StreamFlags
  int32_t priority;         // lower number = higher priority, as in CUDA
  uint32_t correlation_id;  // of the API call that created it (CUPTI STREAM records); 0 unknown
  int64_t created_ns;       // INT64_MIN: unknown
};
static_assert(sizeof(StreamRecord) == 40);

struct KernelRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t correlation_id;
  int32_t grid_x, grid_y, grid_z;
  int32_t block_x, block_y, block_z;
  int32_t static_shared_bytes;
  int32_t dynamic_shared_bytes;
  uint32_t local_memory_per_thread;
  uint32_t name_sid;
  uint16_t registers_per_thread;
  uint8_t launch_type;  // CUpti_ActivityLaunchType
  uint8_t is_device_launched;
  uint32_t graph_id;  // 0 when not launched from a graph
  uint32_t cluster_x, cluster_y, cluster_z;
  uint32_t channel_id;
  uint64_t graph_node_id;
};
static_assert(sizeof(KernelRecord) == 112);

struct MemcpyRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t bytes;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t correlation_id;
  uint8_t copy_kind;  // CUpti_ActivityMemcpyKind values (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, ...)
  uint8_t src_kind;   // CUpti_ActivityMemoryKind values (1 pageable, 2 pinned, 3 device, 5 managed, ...)
  uint8_t dst_kind;
  uint8_t flags;           // bit 0: async (CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)
  uint32_t src_device_id;  // for peer copies; else device_id
  uint32_t dst_device_id;
  uint32_t graph_id;
  uint32_t channel_id;
  uint32_t reserved;
};
static_assert(sizeof(MemcpyRecord) == 72);

struct MemsetRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t bytes;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t correlation_id;
  uint32_t value;
  uint16_t flags;        // bit 0: async (CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC)
  uint16_t memory_kind;  // CUpti_ActivityMemoryKind
  uint32_t graph_id;
  uint32_t channel_id;
};
static_assert(sizeof(MemsetRecord) == 64);

struct SynchronizationRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint32_t type;  // CUpti_ActivitySynchronizationType values
  uint32_t context_id;
  uint32_t stream_id;  // kNone unless type is stream synchronize / stream wait event
  uint32_t event_id;   // kNone unless an event is involved
  uint32_t correlation_id;
  uint32_t return_value;
};
static_assert(sizeof(SynchronizationRecord) == 48);

struct CudaEventRecord {
  RecordHeader h;
  int64_t device_ns;  // when the GPU passed the record point; INT64_MIN if unknown
  uint32_t correlation_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t event_id;
  uint32_t device_id;
  uint32_t reserved;
};
static_assert(sizeof(CudaEventRecord) == 40);

enum ApiDomain : uint32_t { kApiRuntime = 1, kApiDriver = 2 };

struct ApiCallRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint32_t domain;  // ApiDomain
  uint32_t cbid;    // CUPTI callback id within the domain
  uint32_t thread_id;
  uint32_t correlation_id;
  uint32_t return_value;  // cudaError_t / CUresult
  uint32_t name_sid;      // e.g. "cudaLaunchKernel"
};
static_assert(sizeof(ApiCallRecord) == 48);

// NVTX markers as CUPTI reports them: a range is a Start and an End record
// with the same id (push/pop and start/end ranges alike); an instantaneous
// marker has the Instantaneous flag. Pairing happens at ingest.
enum MarkerFlags : uint32_t {
  kMarkerInstantaneous = 1u << 0,
  kMarkerStart = 1u << 1,
  kMarkerEnd = 1u << 2,
};

struct MarkerRecord {
  RecordHeader h;
  int64_t timestamp_ns;
  uint32_t id;
  uint32_t flags;        // MarkerFlags
  uint32_t object_kind;  // CUpti_ActivityObjectKind: 1 process, 2 thread
  uint32_t thread_id;    // thread id when object_kind is thread, else 0
  uint32_t name_sid;
  uint32_t domain_sid;  // 0 for the default domain
};
static_assert(sizeof(MarkerRecord) == 40);

struct OverheadRecord {
  RecordHeader h;
  int64_t start_ns;
  int64_t end_ns;
  uint32_t overhead_kind;  // CUpti_ActivityOverheadKind
  uint32_t object_kind;    // CUpti_ActivityObjectKind
  uint32_t object_id;      // thread id or device id, by object_kind
  uint32_t correlation_id;
};
static_assert(sizeof(OverheadRecord) == 40);

enum DropSource : uint32_t {
  kDropCupti = 1,       // CUPTI dropped records (cuptiActivityGetNumDroppedRecords)
  kDropBufferCap = 2,   // buffer pool at its cap: a buffer request was refused (count = refusals)
  kDropWriter = 3,      // records not written (output error); count = records
  kDropIncomplete = 4,  // records CUPTI delivered without their GPU timestamps (0), e.g. still
                        // in flight at a forced flush; count = records. Added with collector 0.1.0.
};

struct DroppedRecord {
  RecordHeader h;
  uint64_t count;
  uint32_t source;      // DropSource
  uint32_t context_id;  // kNone if not per context
  uint32_t stream_id;   // kNone if not per stream
  uint32_t reserved;
};
static_assert(sizeof(DroppedRecord) == 32);

enum ErrorCode : uint32_t {
  kErrorCuptiSubscribe = 1,  // another CUPTI client (profiler) is active in the process
  kErrorCuptiVersion = 2,    // CUPTI runtime older than the collector needs
  kErrorActivityEnable = 3,  // an activity kind could not be enabled
  kErrorOutput = 4,          // writing the output file failed
  kErrorCallbacksTaken = 5,  // another CUPTI client replaced the activity buffer callbacks
  kErrorCupti = 6,           // any other CUPTI call failure
};

struct ErrorRecord {
  RecordHeader h;
  uint32_t code;         // ErrorCode
  uint32_t message_sid;  // human-readable detail
};
static_assert(sizeof(ErrorRecord) == 16);

enum FlushReason : uint32_t {
  kFlushPeriodic = 1,
  kFlushSignal = 2,        // SIGINT/SIGTERM: everything delivered so far is on disk
  kFlushProfilerStop = 3,  // cuProfilerStop / cudaProfilerStop
};

struct FlushRecord {
  RecordHeader h;
  uint32_t reason;  // FlushReason
  uint32_t signal;  // signal number for kFlushSignal, else 0
  int64_t at_ns;
  uint64_t records_so_far;
};
static_assert(sizeof(FlushRecord) == 32);

// The last record of a file whose process ended normally. Its absence marks
// the recording of that process incomplete.
struct EndRecord {
  RecordHeader h;
  uint32_t reason;  // 1 = process exit
  uint32_t reserved;
  int64_t end_ns;
  uint64_t records_written;    // records in the file before this one
  uint64_t buffers_completed;  // CUPTI buffers processed
};
static_assert(sizeof(EndRecord) == 40);

// One environment variable of the process, as it was when the process
// initialised CUDA: written right after the first Process record, one per
// variable of process_env.h's list that is set (a launcher's rank identity:
// RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, ...). Nothing else of the
// environment is recorded. Added with issue 13 (collector 0.1.0) as a new
// kind, so the format version stays 1: older readers skip it by its size.
struct ProcessEnvRecord {
  RecordHeader h;
  uint32_t name_sid;   // the variable's name
  uint32_t value_sid;  // its value (its first kProcessEnvValueBytes bytes, process_env.h)
};
static_assert(sizeof(ProcessEnvRecord) == 16);

// What an NVTX range or mark carried in NVTX's payload extension
// (nvtx3/nvToolsExtPayload.h): a block of bytes laid out by a schema the
// program registered. NCCL (2.19 and later) attaches one to every
// collective's range: the communicator, the message size in bytes, the
// reduction, the root or peer. The collector decodes the scalar entries of
// the schema (integers, floats, registered enums) with the entries' own
// names, so readers never need the schema. Refers to the Marker record of
// `marker_id` in the same file (the range's Start, or the mark), which it
// may precede or follow. Variable size: followed by `field_count`
// MarkerPayloadField. Added with issue 13 (collector 0.1.0) as a new kind,
// so the format version stays 1: older readers skip it by its size.
struct MarkerPayloadRecord {
  RecordHeader h;
  uint32_t marker_id;
  uint32_t field_count;  // at most kMarkerPayloadMaxFields
  uint64_t schema_id;    // the NVTX payload schema the fields were decoded with
};
static_assert(sizeof(MarkerPayloadRecord) == 24);

inline constexpr uint32_t kMarkerPayloadMaxFields = 32;

// How MarkerPayloadField::value reads.
enum PayloadValueKind : uint32_t {
  kPayloadSigned = 1,    // an int64_t
  kPayloadUnsigned = 2,  // a uint64_t
  kPayloadFloat = 3,     // the bits of an IEEE 754 double
  kPayloadEnum = 4,      // a registered enum's integer (uint64_t); label_sid names it
};

struct MarkerPayloadField {
  uint32_t name_sid;     // the schema entry's name ("Message size [bytes]"); 0: the entry has none
  uint32_t kind;         // PayloadValueKind
  uint64_t value;        // by kind
  uint32_t label_sid;    // kPayloadEnum: the name the program registered for the value ("Sum"); 0: none matched
  uint32_t entry_index;  // the entry's place in its schema, from 0 (what names an unnamed entry)
};
static_assert(sizeof(MarkerPayloadField) == 24);

inline constexpr uint32_t align8(uint32_t n) { return (n + 7u) & ~7u; }

}  // namespace streamscope::rs

// streamscope-synthetic-stream: writes record streams with the collector's
// own encoder (record_encoder.h), without CUDA, for the record-stream
// contract test and the ingest benchmark.
//
//   streamscope-synthetic-stream --out FILE [--expect FILE.json] [--pid N]
//                                [--origin-ns N] [--no-end] [--env NAME=VALUE]...
//       A deterministic stream with at least one record of every kind and
//       edge values (negative relative times, kNone ids, 0 and maximum small
//       integers, non-ASCII/empty/100 KB strings, a uuid of 16 distinct
//       bytes), then End unless --no-end. --env (repeatable) replaces the
//       stream's ProcessEnv records (a torchrun rank's by default) with one
//       per NAME=VALUE given, in that order, as a launcher's would be. --expect also writes JSON of
//       exactly what was written, generated from the same C++ values:
//         {"header": {...}, "records": [{"kind": "String", "id": 1, "value": "..."},
//                                       {"kind": "Kernel", <every field but h>}, ...]}
//       64-bit origins are decimal strings; uuid is 32 lowercase hex digits;
//       MarkerPayload's fields are a list ("fields": [{name_sid, kind,
//       value, label_sid, entry_index}]) whose 64-bit value is a decimal
//       string of its bits; every other field is a JSON number (all below
//       2^53 in magnitude).
//
//   streamscope-synthetic-stream --out FILE --bench-launches N [--bench-period-ns P] [--pid N] [--origin-ns N] [--env NAME=VALUE]...
//       A launch-bound stream as the collector writes it for a loop of N
//       kernel launches on 4 streams: per launch a cudaLaunchKernel runtime
//       record and its kernel (P ns apart, default 4000), a pinned copy every
//       64 launches, an NVTX range every 1000. Written in chunks: N =
//       5,000,000 is fine. P = 60000 is a run of 1 M launches per minute, as
//       the live view's benchmark and tests replay it.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "collector_version.h"
#include "record_encoder.h"

using namespace streamscope::rs;

namespace {

// ---- JSON of what was written ---------------------------------------------------

class Json {
 public:
  void begin(const char* kind) {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
    out_ += "{\"kind\":";
    out_ += quote(kind);
  }
  void end() { out_ += "}"; }
  template <class T>
  void num(const char* name, T v) {
    static_assert(std::is_integral_v<T>);
    key(name);
    if constexpr (std::is_signed_v<T>) out_ += std::to_string(static_cast<long long>(v));
    else out_ += std::to_string(static_cast<unsigned long long>(v));
  }
  void str(const char* name, const std::string& s) {
    key(name);
    out_ += quote(s);
  }
  // Text that is JSON already (a list).
  void raw(const char* name, const std::string& json) {
    key(name);
    out_ += json;
  }
  void uuid(const char* name, const uint8_t* u) {
    char hex[33];
    for (int i = 0; i < 16; i++) std::snprintf(hex + 2 * i, 3, "%02x", u[i]);
    str(name, hex);
  }
  const std::string& text() const { return out_; }

  // JSON string: quotes, backslash and control characters escaped; other
  // bytes (UTF-8 included) as they are.
  static std::string quote(const std::string& s) {
    std::string q = "\"";
    for (unsigned char c : s) {
      switch (c) {
        case '"': q += "\\\""; break;
        case '\\': q += "\\\\"; break;
        case '\n': q += "\\n"; break;
        case '\r': q += "\\r"; break;
        case '\t': q += "\\t"; break;
        case '\b': q += "\\b"; break;
        case '\f': q += "\\f"; break;
        default:
          if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            q += b;
          } else {
            q += static_cast<char>(c);
          }
      }
    }
    return q + "\"";
  }

 private:
  void key(const char* name) {
    out_ += ",\"";
    out_ += name;
    out_ += "\":";
  }
  std::string out_;
  bool first_ = true;
};

// Every field by its C++ name, in struct order (the record header h excepted).
// A table, one record per function: clang-format leaves it as written.
// clang-format off
#define F(name) j.num(#name, r.name)
void fields(Json& j, const ProcessRecord& r) {
  F(pid); F(ppid); F(command_sid); F(executable_sid); F(hostname_sid); F(driver_version); F(runtime_version);
  F(cupti_version); F(cupti_api_version); F(reserved);
}
void fields(Json& j, const DeviceRecord& r) {
  F(device_id); F(name_sid); j.uuid("uuid", r.uuid); F(cc_major); F(cc_minor); F(sm_count); F(async_engine_count);
  F(concurrent_kernels); F(pci_domain); F(pci_bus); F(pci_device); F(core_clock_khz); F(memory_clock_khz);
  F(memory_bus_width_bits); F(l2_cache_bytes); F(max_threads_per_sm); F(max_shared_memory_per_sm);
  F(max_registers_per_sm); F(max_blocks_per_sm); F(total_memory_bytes);
}
void fields(Json& j, const ContextRecord& r) { F(context_id); F(device_id); F(null_stream_id); F(reserved); }
void fields(Json& j, const StreamRecord& r) {
  F(context_id); F(stream_id); F(device_id); F(flags); F(priority); F(correlation_id); F(created_ns);
}
void fields(Json& j, const KernelRecord& r) {
  F(start_ns); F(end_ns); F(device_id); F(context_id); F(stream_id); F(correlation_id); F(grid_x); F(grid_y); F(grid_z);
  F(block_x); F(block_y); F(block_z); F(static_shared_bytes); F(dynamic_shared_bytes); F(local_memory_per_thread);
  F(name_sid); F(registers_per_thread); F(launch_type); F(is_device_launched); F(graph_id); F(cluster_x); F(cluster_y);
  F(cluster_z); F(channel_id); F(graph_node_id);
}
void fields(Json& j, const MemcpyRecord& r) {
  F(start_ns); F(end_ns); F(bytes); F(device_id); F(context_id); F(stream_id); F(correlation_id); F(copy_kind);
  F(src_kind); F(dst_kind); F(flags); F(src_device_id); F(dst_device_id); F(graph_id); F(channel_id); F(reserved);
}
void fields(Json& j, const MemsetRecord& r) {
  F(start_ns); F(end_ns); F(bytes); F(device_id); F(context_id); F(stream_id); F(correlation_id); F(value); F(flags);
  F(memory_kind); F(graph_id); F(channel_id);
}
void fields(Json& j, const SynchronizationRecord& r) {
  F(start_ns); F(end_ns); F(type); F(context_id); F(stream_id); F(event_id); F(correlation_id); F(return_value);
}
void fields(Json& j, const CudaEventRecord& r) {
  F(device_ns); F(correlation_id); F(context_id); F(stream_id); F(event_id); F(device_id); F(reserved);
}
void fields(Json& j, const ApiCallRecord& r) {
  F(start_ns); F(end_ns); F(domain); F(cbid); F(thread_id); F(correlation_id); F(return_value); F(name_sid);
}
void fields(Json& j, const MarkerRecord& r) {
  F(timestamp_ns); F(id); F(flags); F(object_kind); F(thread_id); F(name_sid); F(domain_sid);
}
void fields(Json& j, const OverheadRecord& r) {
  F(start_ns); F(end_ns); F(overhead_kind); F(object_kind); F(object_id); F(correlation_id);
}
void fields(Json& j, const DroppedRecord& r) { F(count); F(source); F(context_id); F(stream_id); F(reserved); }
void fields(Json& j, const ErrorRecord& r) { F(code); F(message_sid); }
void fields(Json& j, const FlushRecord& r) { F(reason); F(signal); F(at_ns); F(records_so_far); }
void fields(Json& j, const EndRecord& r) { F(reason); F(reserved); F(end_ns); F(records_written); F(buffers_completed); }
void fields(Json& j, const ProcessEnvRecord& r) { F(name_sid); F(value_sid); }
#undef F
// clang-format on

// The enum names of Kind (record_format.h).
const char* nameOf(Kind k) {
  const char* name = kindName(k);
  return name ? name : "?";
}

// Encodes, writes in chunks, and (when asked) describes every record in
// stream order.
class Writer {
 public:
  Writer(FILE* f, const char* path, Json* json) : file_(f), path_(path), json_(json), enc_(&bytes_) {}

  void header(const FileHeader& h) { enc_.writeHeader(h); }

  uint32_t intern(const std::string& s) {
    const uint64_t before = enc_.recordsWritten();
    const uint32_t id = enc_.intern(std::string_view(s));
    if (json_ && enc_.recordsWritten() != before) {  // a new String record
      json_->begin("String");
      json_->num("id", id);
      json_->str("value", s);
      json_->end();
    }
    return id;
  }

  template <class R>
  void write(R r) {
    enc_.write(r);
    if (json_) {
      json_->begin(nameOf(KindOf<R>::value));
      fields(*json_, r);
      json_->end();
    }
    if (bytes_.size() >= (4u << 20)) flush();
  }

  // A MarkerPayload record and its fields.
  void payload(MarkerPayloadRecord r, const std::vector<MarkerPayloadField>& fields) {
    enc_.writeWithItems(r, fields.data(), static_cast<uint32_t>(fields.size()));
    if (json_) {
      json_->begin(nameOf(Kind::MarkerPayload));
      json_->num("marker_id", r.marker_id);
      json_->num("field_count", r.field_count);
      json_->num("schema_id", r.schema_id);
      std::string list = "[";
      for (const MarkerPayloadField& f : fields) {
        list += list.size() > 1 ? "," : "";
        list += "{\"name_sid\":" + std::to_string(f.name_sid) + ",\"kind\":" + std::to_string(f.kind) + ",\"value\":\"" +
                std::to_string(f.value) + "\",\"label_sid\":" + std::to_string(f.label_sid) +
                ",\"entry_index\":" + std::to_string(f.entry_index) + "}";
      }
      json_->raw("fields", list + "]");
      json_->end();
    }
  }

  uint64_t records() const { return enc_.recordsWritten(); }

  void flush() {
    if (!bytes_.empty() && std::fwrite(bytes_.data(), 1, bytes_.size(), file_) != bytes_.size()) {
      std::fprintf(stderr, "streamscope-synthetic-stream: writing %s failed: %s\n", path_, std::strerror(errno));
      std::exit(1);
    }
    bytes_.clear();
  }

 private:
  FILE* file_;
  const char* path_;
  Json* json_;
  std::vector<uint8_t> bytes_;
  RecordEncoder enc_;
};

// ---- Every kind, edge values ------------------------------------------------------

// NAME=VALUE pairs of --env: the ProcessEnv records to write.
using EnvList = std::vector<std::pair<std::string, std::string>>;

void processEnv(Writer& w, const EnvList& env) {
  for (const auto& [name, value] : env) {
    ProcessEnvRecord r{};
    r.name_sid = w.intern(name);
    r.value_sid = w.intern(value);
    w.write(r);
  }
}

// The process, and the variables the collector read (ProcessEnv).
void edgeProcess(Writer& w, uint32_t pid, const EnvList* env) {
  ProcessRecord p{};
  p.pid = pid;
  p.ppid = 1;
  p.command_sid = w.intern("python3 train.py --name \"quoted\" C:\\back\\slash\ttab\nnewline\x01\x1f end");
  p.executable_sid = w.intern("/usr/bin/python3.12");
  p.hostname_sid = w.intern(
      "gpu-n\xc3\xb8"
      "de-\xe2\x9c\x93-\xf0\x9f\x9a\x80");  // UTF-8: ø ✓ 🚀
  p.driver_version = 13000;
  p.runtime_version = 0;
  p.cupti_version = 130001;
  p.cupti_api_version = 130001;
  p.reserved = 0;
  w.write(p);

  // Right after Process, as the collector writes them: a torchrun worker's
  // rank identity by default, with an empty value and a value that is a
  // string already interned (the host name).
  const EnvList torchrun = {{"RANK", "3"},
                            {"LOCAL_RANK", "1"},
                            {"WORLD_SIZE", "8"},
                            {"MASTER_ADDR",
                             "gpu-n\xc3\xb8"
                             "de-\xe2\x9c\x93-\xf0\x9f\x9a\x80"},
                            {"CUDA_VISIBLE_DEVICES", ""}};
  processEnv(w, env ? *env : torchrun);
}

// A device, a context whose null stream is known and one whose is not, and
// streams: legacy default, high priority, implicit.
void edgeDeviceAndStreams(Writer& w) {
  DeviceRecord d{};
  d.device_id = 0;
  d.name_sid = w.intern("NVIDIA H100 80GB HBM3");
  for (int i = 0; i < 16; i++) d.uuid[i] = static_cast<uint8_t>(15 * (i + 1));  // 0x0f, 0x1e, ... 0xf0: all distinct
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.async_engine_count = 3;
  d.concurrent_kernels = 1;
  d.pci_domain = 0;
  d.pci_bus = 0x1b;
  d.pci_device = 0;
  d.core_clock_khz = 1980000;
  d.memory_clock_khz = 2619000;
  d.memory_bus_width_bits = 5120;
  d.l2_cache_bytes = 52428800;
  d.max_threads_per_sm = 2048;
  d.max_shared_memory_per_sm = 233472;
  d.max_registers_per_sm = 65536;
  d.max_blocks_per_sm = 32;
  d.total_memory_bytes = 85045870592ull;
  w.write(d);

  ContextRecord c{};
  c.context_id = 1;
  c.device_id = 0;
  c.null_stream_id = 7;
  w.write(c);
  ContextRecord c2{};  // a context whose null stream is unknown
  c2.context_id = UINT32_MAX - 1;
  c2.device_id = 0;
  c2.null_stream_id = kNone;
  w.write(c2);

  StreamRecord s0{};
  s0.context_id = 1;
  s0.stream_id = 7;
  s0.device_id = 0;
  s0.flags = kStreamLegacyDefault;
  s0.priority = 0;
  s0.created_ns = -1500;  // created before the origin
  w.write(s0);
  StreamRecord s1{};
  s1.context_id = 1;
  s1.stream_id = 13;
  s1.device_id = 0;
  s1.flags = kStreamNonBlocking;
  s1.priority = -5;  // high priority
  s1.created_ns = 2000;
  w.write(s1);
  StreamRecord s2 = s1;
  s2.stream_id = 14;
  s2.flags = kStreamNonBlocking | kStreamPerThreadDefault | kStreamImplicit;
  s2.priority = 0;
  s2.created_ns = 0;
  w.write(s2);
}

// Kernels: extreme launch values, a 100 KB name, a stream never declared.
void edgeKernels(Writer& w) {
  KernelRecord k{};
  k.name_sid =
      w.intern("_Z9normaliseIdEvPKT_PS0_i");  // mangled, as CUPTI names C++ kernels: void normalise<double>(double const*, double*, int)
  k.start_ns = -250;
  k.end_ns = 4'000'000'000'000ll;
  k.device_id = 0;
  k.context_id = 1;
  k.stream_id = 13;
  k.correlation_id = UINT32_MAX;
  k.grid_x = INT32_MAX;
  k.grid_y = 1;
  k.grid_z = 1;
  k.block_x = 1024;
  k.block_y = 1;
  k.block_z = 1;
  k.static_shared_bytes = 49152;
  k.dynamic_shared_bytes = 0;
  k.local_memory_per_thread = 0;
  k.registers_per_thread = UINT16_MAX;
  k.launch_type = UINT8_MAX;
  k.is_device_launched = 0;
  k.graph_id = 0;
  k.cluster_x = 1;
  k.cluster_y = 2;
  k.cluster_z = 3;
  k.channel_id = 4;
  k.graph_node_id = (1ull << 53) - 1;
  w.write(k);
  KernelRecord k2 = k;
  k2.name_sid = w.intern(std::string(100 * 1024, 'k'));  // a 100 KB name
  k2.start_ns = 5000;
  k2.end_ns = 5001;
  k2.stream_id = 99;  // a stream never declared (implicit)
  k2.correlation_id = 2;
  k2.grid_x = INT32_MIN;
  k2.dynamic_shared_bytes = -1;
  k2.registers_per_thread = 0;
  k2.launch_type = 0;
  k2.is_device_launched = UINT8_MAX;
  k2.graph_id = UINT32_MAX;
  k2.local_memory_per_thread = UINT32_MAX;
  k2.graph_node_id = 0;
  w.write(k2);
}

// Copies (host to device, peer, values out of range) and memsets.
void edgeCopiesAndMemsets(Writer& w) {
  MemcpyRecord m{};
  m.start_ns = 100;
  m.end_ns = 2100;
  m.bytes = (1ull << 40) + 3;
  m.device_id = 0;
  m.context_id = 1;
  m.stream_id = 13;
  m.correlation_id = 3;
  m.copy_kind = 1;  // HtoD
  m.src_kind = 2;   // pinned
  m.dst_kind = 3;   // device
  m.flags = 1;      // async
  m.src_device_id = 0;
  m.dst_device_id = 0;
  m.graph_id = 0;
  m.channel_id = 9;
  w.write(m);
  MemcpyRecord peer = m;
  peer.copy_kind = 10;  // PtoP
  peer.src_kind = 3;
  peer.dst_kind = 3;
  peer.flags = 0;
  peer.src_device_id = 0;
  peer.dst_device_id = 1;
  peer.correlation_id = 4;
  w.write(peer);
  MemcpyRecord odd = m;
  odd.copy_kind = UINT8_MAX;
  odd.src_kind = 0;
  odd.dst_kind = UINT8_MAX;
  odd.flags = UINT8_MAX;
  odd.bytes = 0;
  odd.start_ns = odd.end_ns = -1;
  odd.correlation_id = 0;
  odd.src_device_id = kNone;
  odd.dst_device_id = kNone;
  w.write(odd);

  MemsetRecord ms{};
  ms.start_ns = 3000;
  ms.end_ns = 3100;
  ms.bytes = 4096;
  ms.device_id = 0;
  ms.context_id = 1;
  ms.stream_id = 7;
  ms.correlation_id = 5;
  ms.value = 0xdeadbeef;
  ms.flags = 1;
  ms.memory_kind = 3;
  ms.graph_id = 0;
  ms.channel_id = 0;
  w.write(ms);
  MemsetRecord ms2 = ms;
  ms2.flags = UINT16_MAX;
  ms2.memory_kind = 0;
  ms2.value = UINT32_MAX;
  ms2.correlation_id = 6;
  w.write(ms2);
}

// Synchronizations (of a stream, of a context) and CUDA event records.
void edgeSyncsAndEvents(Writer& w) {
  SynchronizationRecord sy{};
  sy.start_ns = 6000;
  sy.end_ns = 9000;
  sy.type = 3;  // stream synchronize
  sy.context_id = 1;
  sy.stream_id = 13;
  sy.event_id = kNone;
  sy.correlation_id = 7;
  sy.return_value = 0;
  w.write(sy);
  SynchronizationRecord sy2 = sy;
  sy2.type = 4;  // context synchronize
  sy2.stream_id = kNone;
  sy2.correlation_id = 8;
  sy2.return_value = 999;
  w.write(sy2);

  CudaEventRecord ev{};
  ev.device_ns = 7500;
  ev.correlation_id = 9;
  ev.context_id = 1;
  ev.stream_id = 13;
  ev.event_id = 42;
  ev.device_id = 0;
  w.write(ev);
  CudaEventRecord ev2 = ev;
  // The collector writes INT64_MIN ("unknown") when CUPTI has no device
  // timestamp; that value is outside +-2^53 and therefore not used here.
  ev2.device_ns = -((1ll << 53) - 1);
  ev2.event_id = 0;
  ev2.correlation_id = 10;
  w.write(ev2);
}

// Runtime and driver API calls.
void edgeApiCalls(Writer& w) {
  ApiCallRecord a{};
  a.name_sid = w.intern("cudaLaunchKernel");
  a.start_ns = -400;
  a.end_ns = -300;
  a.domain = kApiRuntime;
  a.cbid = 211;
  a.thread_id = 123456;
  a.correlation_id = UINT32_MAX;
  a.return_value = 0;
  w.write(a);
  ApiCallRecord a2 = a;
  a2.name_sid = w.intern("cuMemcpyHtoDAsync_v2");
  a2.domain = kApiDriver;
  a2.cbid = 279;
  a2.correlation_id = 3;
  a2.return_value = 1;
  a2.start_ns = 50;
  a2.end_ns = 90;
  a2.thread_id = UINT32_MAX;
  w.write(a2);
}

// NVTX: a range with a payload, an early payload, an orphan payload, an
// instant marker in a domain, a range never closed.
void edgeMarkers(Writer& w) {
  MarkerRecord mk{};
  mk.name_sid = w.intern("issue chunk 0");
  mk.domain_sid = 0;  // default domain
  mk.timestamp_ns = 10;
  mk.id = 1;
  mk.flags = kMarkerStart;
  mk.object_kind = 2;  // thread
  mk.thread_id = 123456;
  w.write(mk);
  // The range's payload, as NCCL's AllReduce range carries one: between its
  // Start and End. Edge values: a 64-bit hash above 2^53, a negative
  // number, a float, an enum with and without its name, an unnamed entry, a
  // name to escape.
  const auto bits = [](double d) {
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
  };
  MarkerPayloadRecord pl{};
  pl.marker_id = 1;
  pl.schema_id = (1u << 24) + 5;
  const std::vector<MarkerPayloadField> fields = {{w.intern("NCCL communicator ID"), kPayloadUnsigned, 0xfedcba9876543210ull, 0, 0},
                                                  {w.intern("Message size [bytes]"), kPayloadUnsigned, 16777216, 0, 1},
                                                  {w.intern("Reduction operation"), kPayloadEnum, 0, w.intern("Sum"), 2},
                                                  {0, kPayloadSigned, static_cast<uint64_t>(-1), 0, 3},
                                                  {w.intern("ratio \"q\" \\ f\xc3\xbcr"), kPayloadFloat, bits(0.5), 0, 4},
                                                  {w.intern("unnamed enum value"), kPayloadEnum, 77, 0, UINT32_MAX}};
  pl.field_count = static_cast<uint32_t>(fields.size());
  w.payload(pl, fields);
  MarkerRecord mk2 = mk;
  mk2.name_sid = 0;  // End records carry no name
  mk2.timestamp_ns = 7000;
  mk2.flags = kMarkerEnd;
  w.write(mk2);
  // A mark's payload written before the mark itself (CUPTI's order is not
  // promised), and one for a marker that never comes, with no fields.
  MarkerPayloadRecord early{};
  early.marker_id = 2;
  early.schema_id = 18;  // NVTX_PAYLOAD_ENTRY_TYPE_UINT64: one unnamed value
  early.field_count = 1;
  w.payload(early, {{0, kPayloadUnsigned, 12345, 0, 0}});
  MarkerPayloadRecord orphan{};
  orphan.marker_id = 4000;
  orphan.schema_id = (1u << 24) + 9;
  w.payload(orphan, {});
  MarkerRecord mk3 = mk;
  mk3.name_sid = w.intern("");  // the empty string
  mk3.domain_sid = w.intern("my-domain");
  mk3.id = 2;
  mk3.flags = kMarkerInstantaneous;
  mk3.timestamp_ns = 8000;
  mk3.object_kind = 1;  // process
  mk3.thread_id = 0;
  w.write(mk3);
  MarkerRecord open_range = mk;
  open_range.id = UINT32_MAX;
  open_range.timestamp_ns = 8500;
  open_range.name_sid = w.intern("never closed");
  w.write(open_range);
}

// The collector's own records: overhead, dropped records, errors, flushes.
void edgeCollectorRecords(Writer& w) {
  OverheadRecord o{};
  o.start_ns = 1;
  o.end_ns = 2;
  o.overhead_kind = 1u << 16;  // CUPTI buffer flush
  o.object_kind = 2;
  o.object_id = 123456;
  o.correlation_id = 0;
  w.write(o);

  DroppedRecord dr{};
  dr.count = 17;
  dr.source = kDropCupti;
  dr.context_id = 1;
  dr.stream_id = kNone;
  w.write(dr);
  DroppedRecord dr2{};
  dr2.count = (1ull << 53) - 1;
  dr2.source = kDropBufferCap;
  dr2.context_id = kNone;
  dr2.stream_id = kNone;
  w.write(dr2);
  DroppedRecord dr3{};
  dr3.count = 0;
  dr3.source = kDropIncomplete;
  dr3.context_id = kNone;
  dr3.stream_id = kNone;
  w.write(dr3);

  ErrorRecord er{};
  er.code = kErrorActivityEnable;
  er.message_sid = w.intern("activity kind OVERHEAD could not be enabled: CUPTI_ERROR_NOT_SUPPORTED");
  w.write(er);
  ErrorRecord er2{};
  er2.code = kErrorCuptiSubscribe;
  er2.message_sid = w.intern("another CUPTI client is active in this process: CUPTI for Nsight Systems; nothing recorded");
  w.write(er2);

  FlushRecord fl{};
  fl.reason = kFlushPeriodic;
  fl.signal = 0;
  fl.at_ns = 9000;
  fl.records_so_far = w.records();
  w.write(fl);
  FlushRecord fl2{};
  fl2.reason = kFlushSignal;
  fl2.signal = 15;
  fl2.at_ns = 9500;
  fl2.records_so_far = w.records();
  w.write(fl2);
}

// Every kind, with edge values: what the contract test reads back exactly.
void edgeCases(Writer& w, uint32_t pid, bool with_end, const EnvList* env) {
  edgeProcess(w, pid, env);
  edgeDeviceAndStreams(w);
  edgeKernels(w);
  edgeCopiesAndMemsets(w);
  edgeSyncsAndEvents(w);
  edgeApiCalls(w);
  edgeMarkers(w);
  edgeCollectorRecords(w);
  if (with_end) {
    EndRecord e{};
    e.reason = 1;
    e.end_ns = 10000;
    e.records_written = w.records();
    e.buffers_completed = 3;
    w.write(e);
  }
}

// ---- Launch-bound stream for the ingest benchmark -----------------------------------

void benchLaunches(Writer& w, uint32_t pid, uint64_t launches, int64_t period, const EnvList* env) {
  ProcessRecord p{};
  p.pid = pid;
  p.ppid = 1;
  p.command_sid = w.intern("streamscope-runner launch-loop --streams 4");
  p.executable_sid = w.intern("/opt/streamscope/streamscope-runner");
  p.hostname_sid = w.intern("bench-host");
  p.driver_version = 13000;
  p.runtime_version = 13000;
  p.cupti_version = 130001;
  p.cupti_api_version = 130001;
  w.write(p);
  if (env) processEnv(w, *env);

  DeviceRecord d{};
  d.device_id = 0;
  d.name_sid = w.intern("NVIDIA H100 80GB HBM3");
  for (int i = 0; i < 16; i++) d.uuid[i] = static_cast<uint8_t>(i * 7 + 1);
  d.cc_major = 9;
  d.sm_count = 132;
  d.async_engine_count = 3;
  d.concurrent_kernels = 1;
  d.total_memory_bytes = 85045870592ull;
  w.write(d);

  ContextRecord c{};
  c.context_id = 1;
  c.device_id = 0;
  c.null_stream_id = 7;
  w.write(c);
  StreamRecord legacy{};
  legacy.context_id = 1;
  legacy.stream_id = 7;
  legacy.flags = kStreamLegacyDefault;
  w.write(legacy);
  const uint32_t streams[4] = {13, 14, 15, 16};
  for (uint32_t id : streams) {
    StreamRecord s{};
    s.context_id = 1;
    s.stream_id = id;
    s.flags = kStreamNonBlocking;
    s.created_ns = 1000;
    w.write(s);
  }

  const uint32_t launch_name = w.intern("cudaLaunchKernel");
  const uint32_t memcpy_name = w.intern("cudaMemcpyAsync");
  const uint32_t kernel_name = w.intern("void empty_kernel<4>(int*)");
  const uint32_t range_name = w.intern("launch batch");
  const uint32_t tid = 4243;
  int64_t t = 1'000'000;
  uint32_t corr = 1;
  bool range_open = false;
  for (uint64_t i = 0; i < launches; i++, t += period) {
    if (i % 1000 == 0) {
      MarkerRecord m{};
      m.name_sid = range_name;
      m.timestamp_ns = t;
      m.id = static_cast<uint32_t>(i / 1000 + 1);
      m.flags = kMarkerStart;
      m.object_kind = 2;
      m.thread_id = tid;
      w.write(m);
      range_open = true;
    }
    ApiCallRecord a{};
    a.start_ns = t;
    a.end_ns = t + 2500;
    a.domain = kApiRuntime;
    a.cbid = 211;
    a.thread_id = tid;
    a.correlation_id = corr;
    a.name_sid = launch_name;
    w.write(a);
    KernelRecord k{};
    k.start_ns = t + 6000;
    k.end_ns = t + 7500;
    k.device_id = 0;
    k.context_id = 1;
    k.stream_id = streams[i % 4];
    k.correlation_id = corr;
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = 32;
    k.block_y = k.block_z = 1;
    k.registers_per_thread = 16;
    k.name_sid = kernel_name;
    w.write(k);
    corr++;
    if (i % 64 == 63) {
      ApiCallRecord am = a;
      am.name_sid = memcpy_name;
      am.cbid = 41;
      am.correlation_id = corr;
      am.start_ns = t + 2600;
      am.end_ns = t + 3800;
      w.write(am);
      const bool h2d = (i / 64) % 2 == 0;  // alternating directions
      MemcpyRecord mc{};
      mc.start_ns = t + 8000;
      mc.end_ns = t + 9000;
      mc.bytes = 1 << 20;
      mc.device_id = 0;
      mc.context_id = 1;
      mc.stream_id = streams[i % 4];
      mc.correlation_id = corr;
      mc.copy_kind = h2d ? 1 : 2;  // HtoD / DtoH
      mc.src_kind = h2d ? 2 : 3;   // pinned → device / device → pinned
      mc.dst_kind = h2d ? 3 : 2;
      mc.flags = 1;
      w.write(mc);
      corr++;
    }
    if (i % 1000 == 999) {
      MarkerRecord m{};
      m.timestamp_ns = t + 3000;
      m.id = static_cast<uint32_t>(i / 1000 + 1);
      m.flags = kMarkerEnd;
      m.object_kind = 2;
      m.thread_id = tid;
      w.write(m);
      range_open = false;
    }
  }
  if (range_open) {
    MarkerRecord m{};
    m.timestamp_ns = t;
    m.id = static_cast<uint32_t>((launches - 1) / 1000 + 1);
    m.flags = kMarkerEnd;
    m.object_kind = 2;
    m.thread_id = tid;
    w.write(m);
  }
  EndRecord e{};
  e.reason = 1;
  e.end_ns = t;
  e.records_written = w.records();
  e.buffers_completed = launches / 20000 + 1;
  w.write(e);
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "streamscope-synthetic-stream: %s\n"
               "usage: streamscope-synthetic-stream --out FILE [--expect FILE.json] [--pid N] [--origin-ns N] [--no-end]\n"
               "                                    [--env NAME=VALUE]...\n"
               "       streamscope-synthetic-stream --out FILE --bench-launches N [--bench-period-ns P] [--pid N] [--origin-ns N]\n"
               "                                    [--env NAME=VALUE]...\n",
               why.c_str());
  std::exit(2);
}

uint64_t parseNumber(const std::string& option, const char* text, uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || !end || *end != '\0' || *text == '\0' || *text == '-' || v > max) {
    usage("bad value for " + option + ": " + text);
  }
  return v;
}

// NAME=VALUE (the value may be empty, and may hold '=').
std::pair<std::string, std::string> envPair(const std::string& pair) {
  const size_t eq = pair.find('=');
  if (eq == std::string::npos || eq == 0) usage("--env wants NAME=VALUE, got " + pair);
  return {pair.substr(0, eq), pair.substr(eq + 1)};
}

}  // namespace

int main(int argc, char** argv) {
  const char* out = nullptr;
  const char* expect = nullptr;
  uint32_t pid = 4242;
  uint64_t origin = 1763800000000000000ull;
  uint64_t bench = 0;
  // ns between launches: more than a launch's own records span (9 us: its kernel and a copy end by then).
  uint64_t period = 4000;
  bool bench_mode = false;
  bool with_end = true;
  EnvList env;
  bool env_given = false;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage("missing value for " + a);
      return argv[++i];
    };
    if (a == "--out") out = value();
    else if (a == "--expect") expect = value();
    else if (a == "--pid") pid = static_cast<uint32_t>(parseNumber(a, value(), UINT32_MAX));
    else if (a == "--origin-ns") origin = parseNumber(a, value(), UINT64_MAX);
    else if (a == "--bench-launches") bench = parseNumber(a, value(), UINT32_MAX / 2), bench_mode = true;
    else if (a == "--bench-period-ns") period = parseNumber(a, value(), 1'000'000'000);
    else if (a == "--no-end") with_end = false;
    else if (a == "--env") env.push_back(envPair(value())), env_given = true;
    else usage("unknown option " + a);
  }
  if (!out) usage("--out is required");
  if (bench_mode && expect) usage("--expect is not available with --bench-launches");
  if (bench_mode && !with_end) usage("--no-end is not available with --bench-launches");

  FILE* f = std::fopen(out, "wb");
  if (!f) {
    std::fprintf(stderr, "streamscope-synthetic-stream: cannot create %s: %s\n", out, std::strerror(errno));
    return 1;
  }
  Json json;
  Writer w(f, out, expect ? &json : nullptr);
  const FileHeader h = makeFileHeader(origin, 1763800000123456789ull, pid, 0, streamscope::kCollectorVersion);
  w.header(h);
  if (period < 4000) usage("--bench-period-ns must be at least 4000");
  if (bench_mode) benchLaunches(w, pid, bench, static_cast<int64_t>(period), env_given ? &env : nullptr);
  else edgeCases(w, pid, with_end, env_given ? &env : nullptr);
  w.flush();
  if (std::fclose(f) != 0) {
    std::fprintf(stderr, "streamscope-synthetic-stream: writing %s failed: %s\n", out, std::strerror(errno));
    return 1;
  }

  if (expect) {
    FILE* j = std::fopen(expect, "wb");
    if (!j) {
      std::fprintf(stderr, "streamscope-synthetic-stream: cannot create %s: %s\n", expect, std::strerror(errno));
      return 1;
    }
    std::fprintf(j,
                 "{\"header\":{\"format_version\":%" PRIu32 ",\"header_bytes\":%" PRIu32 ",\"origin_ns\":\"%" PRIu64
                 "\",\"origin_wall_ns\":\"%" PRIu64 "\",\"pid\":%" PRIu32 ",\"flags\":%" PRIu32 ",\"collector_version\":%" PRIu32
                 "},\n\"records\":[",
                 h.format_version, h.header_bytes, h.origin_ns, h.origin_wall_ns, h.pid, h.flags, h.collector_version);
    const std::string& records = json.text();
    const bool ok = std::fwrite(records.data(), 1, records.size(), j) == records.size() && std::fputs("\n]}\n", j) >= 0;
    if (std::fclose(j) != 0 || !ok) {
      std::fprintf(stderr, "streamscope-synthetic-stream: writing %s failed\n", expect);
      return 1;
    }
  }
  return 0;
}

// The payload extension's types (nvtxPayloadData_t and the registration
// structs CUPTI hands back); this file implements none of NVTX's functions.
#define NVTX_NO_IMPL
#include "activity_translator.h"

#include <cstdlib>
#include <cstring>

#include <nvtx3/nvToolsExtPayload.h>

#include "cupti_copy.h"

namespace streamscope {

using namespace rs;

namespace {

// CUPTI's record of a domain's payload registrations (CUPTI's documentation,
// "CUPTI NVTX Extended Payload Support"; declared in no header, so looked
// up by name, in the CUPTI copy the collector is bound to: an older CUPTI
// without it leaves payloads undecoded instead of the library unloadable).
using GetPayloadAttr = CUptiResult(CUPTIAPI*)(uint32_t cupti_domain_id, uint64_t schema_id, CUpti_NvtxExtPayloadAttr* out);

nvtx_payload::Registration registrationFromCupti(uint32_t domain, uint64_t id) {
  static const auto get = reinterpret_cast<GetPayloadAttr>(cuptiSymbol("cuptiActivityGetNvtxExtPayloadAttr"));
  nvtx_payload::Registration r;
  CUpti_NvtxExtPayloadAttr a{};
  a.structSize = sizeof a;
  if (!get || get(domain, id, &a) != CUPTI_SUCCESS || !a.attributes) return r;
  // CUPTI hands out copies allocated with malloc, the attributes and their
  // entries array, for the caller to free (as CUPTI's nvtx_payload_attributes
  // sample and XLA's profiler do).
  if (a.type == CUPTI_NVTX_EXT_PAYLOAD_TYPE_SCHEMA) {
    auto* s = static_cast<nvtxPayloadSchemaAttr_t*>(a.attributes);
    r.kind = nvtx_payload::Registration::kSchema;
    r.schema = nvtx_payload::schemaOf(*s);
    std::free(const_cast<nvtxPayloadSchemaEntry_t*>(s->entries));
  } else if (a.type == CUPTI_NVTX_EXT_PAYLOAD_TYPE_ENUM) {
    auto* e = static_cast<nvtxPayloadEnumAttr_t*>(a.attributes);
    r.kind = nvtx_payload::Registration::kEnum;
    r.enumeration = nvtx_payload::enumOf(*e);
    std::free(const_cast<nvtxPayloadEnum_t*>(e->entries));
  }
  std::free(a.attributes);
  return r;
}

}  // namespace

ActivityTranslator::ActivityTranslator(RecordEncoder& encoder, uint64_t origin_ns)
    : enc_(encoder), origin_(origin_ns), payload_types_(registrationFromCupti) {}

void ActivityTranslator::translateBuffer(uint8_t* buffer, size_t valid_size) {
  if (!buffer || valid_size == 0) return;
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult r = cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (r == CUPTI_SUCCESS) {
      translate(record);
      continue;
    }
    // CUPTI_ERROR_MAX_LIMIT_REACHED: end of the buffer. Anything else
    // (CUPTI_ERROR_INVALID_KIND: an incomplete or invalid record) ends the
    // iteration too, as CUPTI documents; the rest of the buffer is lost.
    if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) ++bad_buffers_;
    return;
  }
}

void ActivityTranslator::translate(const CUpti_Activity* record) {
  const uint64_t incomplete_before = incomplete_;
  switch (record->kind) {
    // CONCURRENT_KERNEL is what the collector enables; KERNEL (which
    // serializes kernels) has the same record struct.
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: handleKernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: handleMemcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:  // peer to peer
      handlePeerMemcpy(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET: handleMemset(*reinterpret_cast<const CUpti_ActivityMemset4*>(record)); break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      handleSynchronization(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: handleCudaEvent(*reinterpret_cast<const CUpti_ActivityCudaEvent2*>(record)); break;
    case CUPTI_ACTIVITY_KIND_RUNTIME: handleApi(*reinterpret_cast<const CUpti_ActivityAPI*>(record), kApiRuntime); break;
    case CUPTI_ACTIVITY_KIND_DRIVER: handleApi(*reinterpret_cast<const CUpti_ActivityAPI*>(record), kApiDriver); break;
    case CUPTI_ACTIVITY_KIND_MARKER: handleMarker(*reinterpret_cast<const CUpti_ActivityMarker2*>(record)); break;
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: handleMarkerData(*reinterpret_cast<const CUpti_ActivityMarkerData2*>(record)); break;
    case CUPTI_ACTIVITY_KIND_STREAM: handleStream(*reinterpret_cast<const CUpti_ActivityStream*>(record)); break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: handleOverhead(*reinterpret_cast<const CUpti_ActivityOverhead3*>(record)); break;
    default: ++unknown_; return;
  }
  if (incomplete_ == incomplete_before) ++translated_;
}

uint32_t ActivityTranslator::apiName(uint32_t domain, uint32_t cbid) {
  const uint64_t key = (static_cast<uint64_t>(domain) << 32) | cbid;
  auto it = api_names_.find(key);
  if (it != api_names_.end()) return it->second;
  const CUpti_CallbackDomain cupti_domain = domain == kApiRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  const char* name = nullptr;
  std::string text;
  if (cuptiGetCallbackName(cupti_domain, cbid, &name) == CUPTI_SUCCESS && name) {
    text = name;
    // CUPTI names runtime callbacks after the runtime version that added
    // them: "cudaLaunchKernel_v7000", "cudaMemcpyAsync_ptsz_v7000",
    // "cudaGetDeviceProperties_v2_v12000". That last "_v" + 4 or more digits
    // is not part of the function's name; strip it. Driver names are the
    // exported symbols ("cuMemcpyHtoDAsync_v2") and stay as they are.
    if (domain == kApiRuntime) {
      const size_t v = text.rfind("_v");
      if (v != std::string::npos && text.size() - (v + 2) >= 4 && text.find_first_not_of("0123456789", v + 2) == std::string::npos) {
        text.resize(v);
      }
    }
  } else {
    text = (domain == kApiRuntime ? "<runtime API " : "<driver API ") + std::to_string(cbid) + ">";
  }
  const uint32_t id = enc_.intern(std::string_view(text));
  api_names_.emplace(key, id);
  return id;
}

uint32_t ActivityTranslator::kernelName(const char* name) {
  if (!name) return enc_.intern(std::string_view("<unknown kernel>"));
  auto it = kernel_names_.find(name);
  if (it != kernel_names_.end() && it->second.second == name) return it->second.first;
  const uint32_t id = enc_.intern(name);
  kernel_names_[name] = {id, std::string(name)};
  return id;
}

void ActivityTranslator::handleKernel(const CUpti_ActivityKernel10& k) {
  if (k.start == 0 || k.end == 0) {
    ++incomplete_;
    return;
  }
  KernelRecord r{};
  r.name_sid = kernelName(k.name);  // may emit a String record, which must precede this one
  r.start_ns = rel(k.start);
  r.end_ns = rel(k.end);
  r.device_id = k.deviceId;
  r.context_id = k.contextId;
  r.stream_id = k.streamId;
  r.correlation_id = k.correlationId;
  r.grid_x = k.gridX;
  r.grid_y = k.gridY;
  r.grid_z = k.gridZ;
  r.block_x = k.blockX;
  r.block_y = k.blockY;
  r.block_z = k.blockZ;
  r.static_shared_bytes = k.staticSharedMemory;
  r.dynamic_shared_bytes = k.dynamicSharedMemory;
  r.local_memory_per_thread = k.localMemoryPerThread;
  r.registers_per_thread = k.registersPerThread;
  r.launch_type = k.launchType;
  r.is_device_launched = k.isDeviceLaunched;
  r.graph_id = k.graphId;
  r.cluster_x = k.clusterX;
  r.cluster_y = k.clusterY;
  r.cluster_z = k.clusterZ;
  r.channel_id = k.channelID;
  r.graph_node_id = k.graphNodeId;
  enc_.write(r);
}

namespace {

// The fields CUpti_ActivityMemcpy6 and CUpti_ActivityMemcpyPtoP4 share.
template <class M>
MemcpyRecord memcpyRecord(const M& m, int64_t start, int64_t end) {
  MemcpyRecord r{};
  r.start_ns = start;
  r.end_ns = end;
  r.bytes = m.bytes;
  r.device_id = m.deviceId;
  r.context_id = m.contextId;
  r.stream_id = m.streamId;
  r.correlation_id = m.correlationId;
  r.copy_kind = m.copyKind;
  r.src_kind = m.srcKind;
  r.dst_kind = m.dstKind;
  r.flags = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
  r.graph_id = m.graphId;
  r.channel_id = m.channelID;
  return r;
}

}  // namespace

void ActivityTranslator::handleMemcpy(const CUpti_ActivityMemcpy6& m) {
  if (m.start == 0 || m.end == 0) {
    ++incomplete_;
    return;
  }
  MemcpyRecord r = memcpyRecord(m, rel(m.start), rel(m.end));
  r.src_device_id = m.deviceId;  // not a peer copy: one device
  r.dst_device_id = m.deviceId;
  enc_.write(r);
}

void ActivityTranslator::handlePeerMemcpy(const CUpti_ActivityMemcpyPtoP4& m) {
  if (m.start == 0 || m.end == 0) {
    ++incomplete_;
    return;
  }
  MemcpyRecord r = memcpyRecord(m, rel(m.start), rel(m.end));
  r.src_device_id = m.srcDeviceId;
  r.dst_device_id = m.dstDeviceId;
  enc_.write(r);
}

void ActivityTranslator::handleMemset(const CUpti_ActivityMemset4& m) {
  if (m.start == 0 || m.end == 0) {
    ++incomplete_;
    return;
  }
  MemsetRecord r{};
  r.start_ns = rel(m.start);
  r.end_ns = rel(m.end);
  r.bytes = m.bytes;
  r.device_id = m.deviceId;
  r.context_id = m.contextId;
  r.stream_id = m.streamId;
  r.correlation_id = m.correlationId;
  r.value = m.value;
  r.flags = (m.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1 : 0;
  r.memory_kind = m.memoryKind;
  r.graph_id = m.graphId;
  r.channel_id = m.channelID;
  enc_.write(r);
}

void ActivityTranslator::handleSynchronization(const CUpti_ActivitySynchronization2& s) {
  SynchronizationRecord r{};
  r.start_ns = rel(s.start);
  r.end_ns = rel(s.end);
  r.type = s.type;
  r.context_id = s.contextId;
  // Not-applicable fields are CUPTI_SYNCHRONIZATION_INVALID_VALUE (~0),
  // which is the stream's kNone.
  static_assert(CUPTI_SYNCHRONIZATION_INVALID_VALUE == kNone);
  r.stream_id = s.streamId;
  r.event_id = s.cudaEventId;
  r.correlation_id = s.correlationId;
  r.return_value = s.returnValue;
  enc_.write(r);
}

void ActivityTranslator::handleCudaEvent(const CUpti_ActivityCudaEvent2& e) {
  CudaEventRecord r{};
  // deviceTimestamp is 0 unless device timestamps are collected
  // (cuptiActivityEnableCudaEventDeviceTimestamps) and known.
  r.device_ns = e.deviceTimestamp ? rel(e.deviceTimestamp) : INT64_MIN;
  r.correlation_id = e.correlationId;
  r.context_id = e.contextId;
  r.stream_id = e.streamId;
  r.event_id = e.eventId;
  r.device_id = e.deviceId;
  enc_.write(r);
}

void ActivityTranslator::handleApi(const CUpti_ActivityAPI& a, uint32_t domain) {
  if (own_tid_ != 0 && a.threadId == own_tid_) {
    ++own_calls_;
    return;
  }
  ApiCallRecord r{};
  r.name_sid = apiName(domain, a.cbid);
  r.start_ns = rel(a.start);
  r.end_ns = rel(a.end);
  r.domain = domain;
  r.cbid = a.cbid;
  r.thread_id = a.threadId;
  r.correlation_id = a.correlationId;
  r.return_value = a.returnValue;
  enc_.write(r);
}

void ActivityTranslator::handleMarker(const CUpti_ActivityMarker2& m) {
  MarkerRecord r{};
  // An End record carries no name: the range's name comes with its Start.
  // domain is null for NVTX's default domain.
  r.name_sid = m.name ? enc_.intern(m.name) : 0;
  r.domain_sid = m.domain ? enc_.intern(m.domain) : 0;
  r.timestamp_ns = rel(m.timestamp);
  r.id = m.id;
  // MarkerFlags use CUPTI's bit values for these three.
  static_assert(uint32_t{kMarkerInstantaneous} == uint32_t{CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS} &&
                uint32_t{kMarkerStart} == uint32_t{CUPTI_ACTIVITY_FLAG_MARKER_START} &&
                uint32_t{kMarkerEnd} == uint32_t{CUPTI_ACTIVITY_FLAG_MARKER_END});
  r.flags = static_cast<uint32_t>(m.flags) & (kMarkerInstantaneous | kMarkerStart | kMarkerEnd);
  r.object_kind = m.objectKind;
  r.thread_id = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;
  enc_.write(r);
}

// MARKER_DATA comes for markers with event attributes (color, category,
// payload); only an extended payload (NVTX's payload extension) is kept.
// CUPTI copied it when the range was pushed — an nvtxPayloadData_t and the
// block it points to, both allocated with malloc — and leaves both to the
// reader of the record to free, decoded or not (CUPTI's
// cupti_nvtx_ext_payload sample, XLA's profiler).
void ActivityTranslator::handleMarkerData(const CUpti_ActivityMarkerData2& m) {
  if (m.payloadKind != CUPTI_METRIC_VALUE_KIND_NVTX_EXTENDED_PAYLOAD) return;
  auto* data = reinterpret_cast<nvtxPayloadData_t*>(static_cast<uintptr_t>(m.payload.metricValueNvtxExtendedPayload));
  if (!data) return;
  const uint64_t schema_id = data->schemaId;
  const bool decoded = nvtx_payload::decode(payload_types_, m.cuptiDomainId, schema_id, data->payload, data->size, &payload_fields_);
  std::free(const_cast<void*>(data->payload));
  std::free(data);
  if (!decoded) {
    ++payloads_undecoded_;
    return;
  }
  payload_record_.clear();
  for (const nvtx_payload::Field& f : payload_fields_) {
    MarkerPayloadField out{};
    // Interned before the record is written: its String records must precede it.
    out.name_sid = f.name.empty() ? 0 : enc_.intern(std::string_view(f.name));
    out.kind = f.kind;
    out.value = f.value;
    out.label_sid = f.label.empty() ? 0 : enc_.intern(std::string_view(f.label));
    out.entry_index = f.entry_index;
    payload_record_.push_back(out);
  }
  MarkerPayloadRecord r{};
  r.marker_id = m.id;
  r.field_count = static_cast<uint32_t>(payload_record_.size());
  r.schema_id = schema_id;
  enc_.writeWithItems(r, payload_record_.data(), r.field_count);
  ++payloads_written_;
}

void ActivityTranslator::handleOverhead(const CUpti_ActivityOverhead3& o) {
  OverheadRecord r{};
  r.start_ns = rel(o.start);
  r.end_ns = rel(o.end);
  r.overhead_kind = o.overheadKind;
  r.object_kind = o.objectKind;
  switch (o.objectKind) {
    case CUPTI_ACTIVITY_OBJECT_THREAD: r.object_id = o.objectId.pt.threadId; break;
    case CUPTI_ACTIVITY_OBJECT_PROCESS: r.object_id = o.objectId.pt.processId; break;
    case CUPTI_ACTIVITY_OBJECT_DEVICE:
    case CUPTI_ACTIVITY_OBJECT_CONTEXT:
    case CUPTI_ACTIVITY_OBJECT_STREAM: r.object_id = o.objectId.dcs.deviceId; break;
    default: r.object_id = kNone; break;
  }
  r.correlation_id = o.correlationId;
  enc_.write(r);
}

}  // namespace streamscope

namespace streamscope {

// Stream creation as CUPTI reports it (CUPTI_ACTIVITY_KIND_STREAM): flags and
// priority without the collector calling the driver on the target's thread,
// where CUPTI would record those calls as if the target had made them.
void ActivityTranslator::handleStream(const CUpti_ActivityStream& s) {
  using namespace rs;
  StreamRecord r{};
  r.context_id = s.contextId;
  r.stream_id = s.streamId;
  r.device_id = kNone;  // the context's device (resolved at ingest)
  switch (s.flag & CUPTI_ACTIVITY_STREAM_CREATE_MASK) {
    case CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING: r.flags = kStreamNonBlocking; break;
    case CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL: r.flags = kStreamLegacyDefault; break;
    default: r.flags = 0; break;
  }
  // CUDA priorities are small negative numbers; CUPTI stores them unsigned.
  r.priority = static_cast<int32_t>(s.priority);
  r.correlation_id = s.correlationId;  // the creating API call, when there is one
  r.created_ns = INT64_MIN;            // CUPTI's stream record carries no time
  enc_.write(r);
}

}  // namespace streamscope

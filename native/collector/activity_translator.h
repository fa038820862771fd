// CUPTI activity records → record-stream records (record_format.h).
//
// The second of the collector's three layers (as libkineto's activity
// processor): it knows CUPTI's record structs and the stream's records,
// nothing about threads, queues or files. It runs on the writer thread only
// and is not thread-safe.
//
// Every time becomes signed nanoseconds relative to the file's origin:
// (int64_t)(ts - origin_ns). CUPTI timestamps are ns since the epoch, above
// 2^53; relative times are exact as JS numbers.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cupti.h>

#include "nvtx_payload.h"
#include "record_encoder.h"

namespace streamscope {

class ActivityTranslator {
 public:
  ActivityTranslator(rs::RecordEncoder& encoder, uint64_t origin_ns);

  // Encodes every record of a completed CUPTI buffer (validSize bytes).
  void translateBuffer(uint8_t* buffer, size_t valid_size);

  // One record (public for tests that build CUPTI records by hand).
  void translate(const CUpti_Activity* record);

  uint64_t recordsTranslated() const { return translated_; }
  // Kinds the switch does not know: counted, skipped.
  uint64_t unknownRecords() const { return unknown_; }
  // Kernels/copies/memsets that CUPTI delivered without GPU timestamps (0):
  // still in flight at a forced flush, or no timing could be collected.
  // Not written; reported as Dropped (kDropIncomplete).
  uint64_t incompleteRecords() const { return incomplete_; }
  // Buffers whose iteration stopped on an error other than "end of buffer".
  uint64_t badBuffers() const { return bad_buffers_; }

  // API calls made by this thread are the collector's own (device queries
  // on the writer thread): CUPTI records them like the target's, they are
  // left out of the stream. Thread ids are system ids (gettid).
  void ignoreApiCallsFromThread(uint32_t tid) { own_tid_ = tid; }
  uint64_t ownApiCallsSkipped() const { return own_calls_; }

  // NVTX extended payloads (MARKER_DATA records): written as MarkerPayload
  // records, or counted when their schema is unknown or nothing in them
  // could be decoded.
  uint64_t payloadsWritten() const { return payloads_written_; }
  uint64_t payloadsUndecoded() const { return payloads_undecoded_; }
  // Where the schemas and enums the program registered come from: CUPTI
  // (cuptiActivityGetNvtxExtPayloadAttr) unless a test gives its own.
  void setPayloadRegistrations(nvtx_payload::Registry::Fetch fetch) { payload_types_ = nvtx_payload::Registry(std::move(fetch)); }

 private:
  int64_t rel(uint64_t ts) const { return static_cast<int64_t>(ts - origin_); }

  void handleKernel(const CUpti_ActivityKernel10& k);
  void handleMemcpy(const CUpti_ActivityMemcpy6& m);
  void handlePeerMemcpy(const CUpti_ActivityMemcpyPtoP4& m);
  void handleMemset(const CUpti_ActivityMemset4& m);
  void handleSynchronization(const CUpti_ActivitySynchronization2& s);
  void handleCudaEvent(const CUpti_ActivityCudaEvent2& e);
  void handleApi(const CUpti_ActivityAPI& a, uint32_t domain);
  void handleMarker(const CUpti_ActivityMarker2& m);
  void handleMarkerData(const CUpti_ActivityMarkerData2& m);
  void handleOverhead(const CUpti_ActivityOverhead3& o);
  void handleStream(const CUpti_ActivityStream& s);

  uint32_t apiName(uint32_t domain, uint32_t cbid);
  uint32_t kernelName(const char* name);

  rs::RecordEncoder& enc_;
  const uint64_t origin_;
  uint64_t translated_ = 0;
  uint64_t unknown_ = 0;
  uint64_t incomplete_ = 0;
  uint64_t bad_buffers_ = 0;
  uint32_t own_tid_ = 0;
  uint64_t own_calls_ = 0;
  uint64_t payloads_written_ = 0;
  uint64_t payloads_undecoded_ = 0;
  nvtx_payload::Registry payload_types_;
  std::vector<nvtx_payload::Field> payload_fields_;     // reused per payload
  std::vector<rs::MarkerPayloadField> payload_record_;  // reused per payload
  // (domain << 32 | cbid) → string id: cuptiGetCallbackName once per API.
  std::unordered_map<uint64_t, uint32_t> api_names_;
  // CUPTI hands the same name pointer for every launch of a function. The
  // pointer is only a lookup key: the content is compared as well (a pointer
  // can be reused for another name after a module unload), and the string
  // itself is copied into the stream.
  std::unordered_map<const char*, std::pair<uint32_t, std::string>> kernel_names_;
};

}  // namespace streamscope

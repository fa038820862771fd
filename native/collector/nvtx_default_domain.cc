#include "nvtx_default_domain.h"

#include <cwchar>

#include <generated_nvtx_meta.h>

namespace streamscope {
namespace {

// wchar_t text (UTF-32 on Linux) as UTF-8.
std::string utf8(const wchar_t* w) {
  std::string s;
  for (; *w; ++w) {
    const uint32_t c = static_cast<uint32_t>(*w);
    if (c < 0x80) {
      s += static_cast<char>(c);
    } else if (c < 0x800) {
      s += static_cast<char>(0xC0 | (c >> 6));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      s += static_cast<char>(0xE0 | (c >> 12));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | ((c >> 18) & 0x07));
      s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return s;
}

}  // namespace

uint32_t NvtxDefaultDomain::nextId() {
  const uint32_t id = next_id_++;
  if (next_id_ == 0) next_id_ = kOwnIdBase;  // 2^31 ranges later: wrap within our half
  return id;
}

// Caller holds mu_.
std::string NvtxDefaultDomain::messageOf(const void* event_attributes) {
  const auto* a = static_cast<const nvtxEventAttributes_t*>(event_attributes);
  if (!a) return "";
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE: return a->message.unicode ? utf8(a->message.unicode) : "";
    case NVTX_MESSAGE_TYPE_REGISTERED: {
      auto it = registered_.find(a->message.registered);
      return it != registered_.end() ? it->second : "";
    }
    default: return "";
  }
}

bool NvtxDefaultDomain::onCallback(CUpti_CallbackId cbid, const CUpti_NvtxData& data, int64_t timestamp_ns, uint32_t thread_id,
                                   Marker* out) {
  const void* p = data.functionParams;
  if (!p) return false;
  std::lock_guard<std::mutex> lock(mu_);
  out->timestamp_ns = timestamp_ns;
  out->thread_id = thread_id;
  out->name.clear();
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
      const auto* r = static_cast<const nvtxDomainRegisterStringA_params*>(p);
      const auto* handle = static_cast<const nvtxStringHandle_t*>(data.functionReturnValue);
      if (!r->domain && r->string && handle && *handle) registered_[*handle] = r->string;
      return false;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* r = static_cast<const nvtxDomainRangePushEx_params*>(p);
      if (r->domain) return false;
      out->id = nextId();
      out->flags = rs::kMarkerStart;
      out->name = messageOf(r->core.eventAttrib);
      push_stacks_[thread_id].push_back(out->id);
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
      const auto* r = static_cast<const nvtxDomainRangePop_params*>(p);
      if (r->domain) return false;
      auto it = push_stacks_.find(thread_id);
      if (it == push_stacks_.end() || it->second.empty()) return false;  // a pop without our push
      out->id = it->second.back();
      it->second.pop_back();
      if (it->second.empty()) push_stacks_.erase(it);
      out->flags = rs::kMarkerEnd;
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto* r = static_cast<const nvtxDomainRangeStartEx_params*>(p);
      if (r->domain) return false;
      out->id = nextId();
      out->flags = rs::kMarkerStart;
      out->name = messageOf(r->core.eventAttrib);
      // The id NVTX hands back (CUPTI's), which nvtxDomainRangeEnd names.
      if (const auto* nvtx_id = static_cast<const nvtxRangeId_t*>(data.functionReturnValue)) {
        open_start_end_[*nvtx_id] = out->id;
      }
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
      // The domain given to End is not needed: only ranges we started are ours.
      const auto* r = static_cast<const nvtxDomainRangeEnd_params*>(p);
      auto it = open_start_end_.find(r->core.id);
      if (it == open_start_end_.end()) return false;
      out->id = it->second;
      open_start_end_.erase(it);
      out->flags = rs::kMarkerEnd;
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
      const auto* r = static_cast<const nvtxDomainMarkEx_params*>(p);
      if (r->domain) return false;
      out->id = nextId();
      out->flags = rs::kMarkerInstantaneous;
      out->name = messageOf(r->core.eventAttrib);
      return true;
    }
    default: return false;
  }
}

}  // namespace streamscope

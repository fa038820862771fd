// A CUPTI client of the target's own, as torch.profiler's Kineto is: a
// library linked to libcupti, loaded RTLD_LOCAL (as Python loads an
// extension module), that asks for a subscription after the collector took
// it. The "inner-client" scenario of run-fake-cupti-tests.sh.
#include <cupti.h>

extern "C" __attribute__((visibility("default"))) int fake_client_subscribe() {
  CUpti_SubscriberHandle handle = nullptr;
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "fake Kineto";
  return static_cast<int>(cuptiSubscribe_v2(&handle, nullptr, nullptr, &params));
}

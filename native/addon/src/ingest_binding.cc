// JS binding of Ingest: `new Ingest(dbPath, { originNs })`,
// `ingestFile(path, { final }) → Promise<IngestProgress>`, `finish({ finalSql }) → Promise`.
// The work runs on a libuv worker thread so the recorder's event loop keeps
// serving signals and progress while a large stream is stored.
#include "ingest_binding.h"

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "ingest.h"
#include "js_error.h"

namespace streamscope::addon {
namespace {

Napi::Object progressToJs(Napi::Env env, const FileProgress& p) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("bytesConsumed", Napi::Number::New(env, static_cast<double>(p.bytes_consumed)));
  o.Set("records", Napi::Number::New(env, static_cast<double>(p.records)));
  Napi::Object by = Napi::Object::New(env);
  for (const auto& [k, v] : p.recordsByKind()) by.Set(k, Napi::Number::New(env, static_cast<double>(v)));
  o.Set("recordsByKind", by);
  o.Set("complete", Napi::Boolean::New(env, p.complete));
  o.Set("pid", Napi::Number::New(env, p.pid));
  if (p.last_flush) {
    Napi::Object f = Napi::Object::New(env);
    f.Set("reason", Napi::Number::New(env, p.last_flush->reason));
    f.Set("signal", Napi::Number::New(env, p.last_flush->signal));
    f.Set("atNs", Napi::Number::New(env, static_cast<double>(p.last_flush->at_ns)));
    o.Set("lastFlush", f);
  } else {
    o.Set("lastFlush", env.Null());
  }
  Napi::Array errors = Napi::Array::New(env, p.errors.size());
  for (size_t i = 0; i < p.errors.size(); i++) {
    Napi::Object e = Napi::Object::New(env);
    e.Set("code", Napi::Number::New(env, p.errors[i].code));
    e.Set("message", Napi::String::New(env, p.errors[i].message));
    errors.Set(static_cast<uint32_t>(i), e);
  }
  o.Set("errors", errors);
  o.Set("dropped", Napi::Number::New(env, static_cast<double>(p.dropped)));
  o.Set("lastKind", p.last_kind ? Napi::String::New(env, p.last_kind) : env.Null());
  if (p.truncated) {
    Napi::Object t = Napi::Object::New(env);
    t.Set("atByte", Napi::Number::New(env, static_cast<double>(p.truncated->at_byte)));
    t.Set("missingBytes", Napi::Number::New(env, static_cast<double>(p.truncated->missing_bytes)));
    o.Set("truncated", t);
  } else {
    o.Set("truncated", env.Null());
  }
  return o;
}

class IngestWrap : public Napi::ObjectWrap<IngestWrap> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "Ingest",
                       {InstanceMethod("ingestFile", &IngestWrap::ingestFile), InstanceMethod("finish", &IngestWrap::finish)});
  }

  explicit IngestWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<IngestWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsString() || !info[1].IsObject()) {
      throw Napi::TypeError::New(env, "new Ingest(dbPath: string, { originNs: bigint })");
    }
    Napi::Value origin = info[1].As<Napi::Object>().Get("originNs");
    if (!origin.IsBigInt()) throw Napi::TypeError::New(env, "Ingest: originNs must be a bigint (an exact CUPTI timestamp)");
    bool lossless = false;
    const uint64_t origin_ns = origin.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) throw Napi::RangeError::New(env, "Ingest: originNs out of range");
    withJsErrors(env, [&] { ingest_ = std::make_shared<Ingest>(info[0].As<Napi::String>().Utf8Value(), origin_ns); });
  }

 private:
  class Worker : public Napi::AsyncWorker {
   public:
    Worker(Napi::Env env, IngestWrap* owner, std::string path, bool final, bool finish, std::vector<std::string> final_sql)
        : Napi::AsyncWorker(env),
          deferred_(Napi::Promise::Deferred::New(env)),
          owner_(owner),
          // Holds the JS object: it cannot be collected while this call runs.
          owner_ref_(Napi::Persistent(owner->Value())),
          ingest_(owner->ingest_),
          path_(std::move(path)),
          final_(final),
          finish_(finish),
          final_sql_(std::move(final_sql)) {}
    Napi::Promise promise() { return deferred_.Promise(); }
    // On the worker thread: a failure is kept as it was thrown, and made
    // the JS Error back on the JS thread (OnError).
    void Execute() override {
      try {
        if (finish_) ingest_->finish(final_sql_);
        else progress_ = ingest_->ingestFile(path_, final_);
      } catch (const std::exception& e) {
        error_ = std::current_exception();
        SetError(e.what());
      }
    }
    void OnOK() override {
      owner_->busy_ = false;
      deferred_.Resolve(finish_ ? Env().Undefined() : progressToJs(Env(), progress_));
    }
    void OnError(const Napi::Error& e) override {
      owner_->busy_ = false;
      Napi::Value reason = e.Value();
      if (error_) {
        try {
          std::rethrow_exception(error_);
        } catch (const std::exception& native) {
          reason = jsError(Env(), native).Value();
        }
      }
      deferred_.Reject(reason);
    }

   private:
    Napi::Promise::Deferred deferred_;
    IngestWrap* owner_;
    Napi::ObjectReference owner_ref_;
    std::shared_ptr<Ingest> ingest_;  // keeps the session alive while the worker runs
    std::string path_;
    bool final_, finish_;
    std::vector<std::string> final_sql_;
    FileProgress progress_;
    std::exception_ptr error_;
  };

  Napi::Value start(const Napi::CallbackInfo& info, std::string path, bool final, bool finish, std::vector<std::string> final_sql = {}) {
    if (busy_) throw Napi::Error::New(info.Env(), "Ingest: one call at a time (await the previous one)");
    if (finished_) throw Napi::Error::New(info.Env(), "Ingest: already finished");
    busy_ = true;
    if (finish) finished_ = true;
    auto* w = new Worker(info.Env(), this, std::move(path), final, finish, std::move(final_sql));
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
  }

  Napi::Value ingestFile(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(info.Env(), "ingestFile(path: string, { final?: boolean })");
    bool final = false;
    if (info.Length() > 1 && info[1].IsObject()) {
      Napi::Value f = info[1].As<Napi::Object>().Get("final");
      final = f.IsBoolean() && f.As<Napi::Boolean>().Value();
    }
    return start(info, info[0].As<Napi::String>().Utf8Value(), final, false);
  }

  // finish({ finalSql?: string[] })
  Napi::Value finish(const Napi::CallbackInfo& info) {
    std::vector<std::string> sql;
    if (info.Length() > 0 && info[0].IsObject()) {
      Napi::Value v = info[0].As<Napi::Object>().Get("finalSql");
      if (v.IsArray()) {
        Napi::Array a = v.As<Napi::Array>();
        for (uint32_t i = 0; i < a.Length(); i++) sql.push_back(a.Get(i).As<Napi::String>().Utf8Value());
      }
    }
    return start(info, "", false, true, std::move(sql));
  }

  std::shared_ptr<Ingest> ingest_;
  bool busy_ = false;
  bool finished_ = false;
};

}  // namespace

void initIngest(Napi::Env env, Napi::Object exports) { exports.Set("Ingest", IngestWrap::define(env)); }

}  // namespace streamscope::addon

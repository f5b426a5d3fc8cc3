#include "runtime/stream.h"

#include "runtime/error.h"

namespace aclnn_portable {

Stream::Stream() : thread_([this] { Loop(); }) {}

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_work_.notify_one();
  thread_.join();
}

void Stream::Enqueue(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(work));
  }
  cv_work_.notify_one();
}

void Stream::Synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void Stream::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_work_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and drained: queued work always runs before exit
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    work();
    work = nullptr;  // release what the closure holds before reporting idle
    lock.lock();
    busy_ = false;
    if (queue_.empty()) cv_idle_.notify_all();
  }
}

HandleRegistry<Stream>& LiveStreams() {
  static auto* registry = new HandleRegistry<Stream>();
  return *registry;
}

aclnnStatus SubmitToStream(const char* api, aclrtStream stream, std::function<void()> work) {
  if (stream == nullptr) {
    work();
    return ACLNN_SUCCESS;
  }
  // Enqueue under the registry lock: a concurrent aclrtDestroyStream then either fails our
  // lookup or removes the stream after the work is queued (and its destructor runs it).
  const bool live = LiveStreams().WithLive(static_cast<Stream*>(stream),
                                           [&](Stream* s) { s->Enqueue(std::move(work)); });
  if (!live)
    return Fail(ACLNN_ERR_PARAM_INVALID, api,
                "stream is not a live aclrtStream (not created by aclrtCreateStream, or destroyed)");
  return ACLNN_SUCCESS;
}

bool CheckStream(const char* api, aclrtStream stream) {
  if (stream == nullptr || LiveStreams().Contains(static_cast<Stream*>(stream))) return true;
  Fail(0, api, "stream is not a live aclrtStream (not created by aclrtCreateStream, or destroyed)");
  return false;
}

}  // namespace aclnn_portable

using namespace aclnn_portable;

extern "C" aclError aclrtCreateStream(aclrtStream* stream) {
  ClearRecentError();
  if (stream == nullptr) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream", "stream must not be null");
  Stream* s = new Stream();
  LiveStreams().Add(s);
  *stream = s;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtDestroyStream(aclrtStream stream) {
  ClearRecentError();
  if (stream == nullptr) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream", "stream must not be null");
  Stream* s = static_cast<Stream*>(stream);
  if (!LiveStreams().Remove(s))
    return Fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, "aclrtDestroyStream",
                "stream is not a live aclrtStream (already destroyed, or released by aclFinalize)");
  delete s;  // drains the queue first
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSynchronizeStream(aclrtStream stream) {
  ClearRecentError();
  if (stream == nullptr) return ACL_SUCCESS;  // the default stream runs synchronously
  Stream* s = static_cast<Stream*>(stream);
  if (!LiveStreams().Contains(s))
    return Fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, "aclrtSynchronizeStream",
                "stream is not a live aclrtStream (already destroyed, or released by aclFinalize)");
  s->Synchronize();
  return ACL_SUCCESS;
}

// Streams: an in-order work queue served by a thread of its own (aclrtStream). Operators hand
// a closure to Submit(); nullptr stream means "run now on the caller".
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "acl/acl.h"
#include "runtime/handles.h"

namespace aclnn_portable {

class Stream {
 public:
  Stream();
  ~Stream();  // finishes queued work, then joins the thread
  void Enqueue(std::function<void()> work);
  void Synchronize();  // returns when everything queued so far has run

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_work_, cv_idle_;
  std::deque<std::function<void()>> queue_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

HandleRegistry<Stream>& LiveStreams();

// Runs `work` on `stream` (in order, asynchronously) or, for nullptr, right now on the caller.
// Returns ACLNN_ERR_PARAM_INVALID with a message naming `api` when the stream is not live.
aclnnStatus SubmitToStream(const char* api, aclrtStream stream, std::function<void()> work);

// For entry points that return void (mhc): true when stream is nullptr or live, else a message.
bool CheckStream(const char* api, aclrtStream stream);

}  // namespace aclnn_portable

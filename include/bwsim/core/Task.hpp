#pragma once
// A warp program: a C++20 coroutine that runs until it co_awaits something that takes
// simulated time. Tasks nest (a Task may co_await another Task) through symmetric transfer.
// An exception escaping a warp program propagates out of Engine::run and ends the run.
#include <coroutine>
#include <cstdlib>
#include <exception>
#include <new>
#include <utility>

#include "bwsim/core/RecycledMemory.hpp"

namespace bwsim {

class Task {
 public:
  struct promise_type;
  using Handle = std::coroutine_handle<promise_type>;

  struct promise_type {
    std::coroutine_handle<> continuation;        // the awaiting parent task, if nested
    void (*on_done)(void*) = nullptr;            // root task: notify the owner
    void* done_context = nullptr;
    std::exception_ptr error;                    // nested task: rethrown in the parent

    // Frames come from this thread's recycled blocks (rounded to 16 bytes): a warp program calls
    // sub-tasks per tile, and the allocator's fresh memory was a measurable share of a run.
    static std::size_t frame_bytes(std::size_t bytes) { return (bytes + 15) / 16 * 16; }
    static void* operator new(std::size_t bytes) {
      if (void* p = recycled::take(frame_bytes(bytes))) return p;
      if (void* p = std::malloc(frame_bytes(bytes))) return p;
      throw std::bad_alloc();
    }
    static void operator delete(void* p, std::size_t bytes) { recycled::give(p, frame_bytes(bytes)); }

    Task get_return_object() { return Task{Handle::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(Handle h) noexcept {
        auto& p = h.promise();
        if (p.continuation) return p.continuation;
        if (p.on_done) p.on_done(p.done_context);
        return std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() {
      if (continuation) {
        error = std::current_exception();
      } else {
        throw;  // root task: abort the simulation run
      }
    }
  };

  Task() = default;
  explicit Task(Handle h) : handle_(h) {}
  Task(Task&& o) noexcept : handle_(std::exchange(o.handle_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  bool valid() const { return static_cast<bool>(handle_); }
  bool done() const { return handle_ && handle_.done(); }
  Handle handle() const { return handle_; }

  // Root use: register a completion callback, then start with handle().resume().
  void set_on_done(void (*fn)(void*), void* context) {
    handle_.promise().on_done = fn;
    handle_.promise().done_context = context;
  }

  // Nested use: `co_await subtask(...)`.
  bool await_ready() const noexcept { return !handle_ || handle_.done(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) noexcept {
    handle_.promise().continuation = parent;
    return handle_;
  }
  void await_resume() {
    if (handle_ && handle_.promise().error) std::rethrow_exception(handle_.promise().error);
  }

 private:
  void reset() {
    if (handle_) handle_.destroy();
    handle_ = {};
  }
  Handle handle_;
};

}  // namespace bwsim

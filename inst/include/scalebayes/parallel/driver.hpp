// scalebayes/parallel/driver.hpp -- draw-parallel driver: worker threads, a stop flag, progress on the caller.
//
// run_parallel(n, threads, body, monitor) runs body(i, worker) for every item i in [0, n) on `threads` worker
// threads that pull indices from an atomic counter. The calling (main) thread never runs items: it waits on
// a condition variable and calls monitor(done) every `poll_ms` milliseconds and once at the end. monitor
// returns false to request a stop (e.g. the user pressed Ctrl-C); workers then finish the item in hand and
// stop. The first exception thrown by body stops all workers and is rethrown on the caller's thread.
//
// A body whose items are long may take a third argument, a StopToken: body(i, worker, stop). It should poll
// stop.stop_requested() every few milliseconds of work and return early when it is true (the item is then not
// counted as completed). Bodies of the form body(i, worker) keep working unchanged.
//
// The monitor is the engine's one progress and interrupt interface: every driver (gibbs, cd, sgmcmc, wbb,
// nn) takes a parallel::Monitor and hands it to run_parallel; the R glue passes sbglue::Progress.
//
// Results must be written by body into slots indexed by i, and all randomness must come from streams keyed
// by i (rng::Stream(seed, i)): then the output is identical for any number of threads.
// Header-only, std only, no R.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "scalebayes/parallel/settings.hpp"

namespace scalebayes {
namespace parallel {

// Result of a run: how many items finished, whether a stop was requested, and `prefix`: items 0 .. prefix - 1
// all finished (an item cut short by a stop, or not started, ends the prefix). After a stop the results of the
// prefix are those of an uninterrupted run (each item's randomness is its own stream), which is what an
// interrupted front end keeps (?scalebayes-interrupts); items finished after the first gap (at most
// threads - 1 of them) are left out of it. An uninterrupted run has prefix == completed == n.
struct RunStatus {
  std::size_t completed = 0;
  bool interrupted = false;
  std::size_t prefix = 0;
};

using Monitor = std::function<bool(std::size_t done)>;

// Read-only view of a run's stop flag (set when the monitor asks to stop or another item threw). A
// default-constructed token never requests a stop. An inline run (items on the calling thread, e.g. a target
// written in R) gives the token a `poll` function: stop_requested() calls it first (it runs the monitor, which
// may set the flag), so the monitor is called wherever the item checks for a stop.
class StopToken {
 public:
  StopToken() = default;
  explicit StopToken(const std::atomic<bool>* flag, const std::function<void()>* poll = nullptr)
      : flag_(flag), poll_(poll) {}
  bool stop_requested() const {
    if (poll_ != nullptr) (*poll_)();
    return flag_ != nullptr && flag_->load(std::memory_order_relaxed);
  }

 private:
  const std::atomic<bool>* flag_ = nullptr;
  const std::function<void()>* poll_ = nullptr;
};

template <class Body>
RunStatus run_parallel(std::size_t n, int threads, Body&& body, const Monitor& monitor = Monitor(),
                       int poll_ms = 100) {
  RunStatus status;
  if (n == 0) {
    if (monitor) monitor(0);
    return status;
  }
  const int nt = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(n, threads < 1 ? 1 : threads)));
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::atomic<bool> stop{false};
  std::atomic<int> running{nt};
  std::exception_ptr error;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<unsigned char> finished(n, 0);  // item i finished (each slot written by one worker only)

  auto worker = [&](int id) {
    try {
      for (;;) {
        if (stop.load(std::memory_order_relaxed)) break;
        const std::size_t i = next.fetch_add(1);
        if (i >= n) break;
        if constexpr (std::is_invocable_v<Body&, std::size_t, int, const StopToken&>) {
          body(i, id, StopToken(&stop));
          if (stop.load()) break;  // the item may have been cut short
        } else {
          body(i, id);
        }
        finished[i] = 1;
        done.fetch_add(1);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu);
      if (!error) error = std::current_exception();
      stop = true;
    }
    {
      std::lock_guard<std::mutex> lk(mu);
      --running;
    }
    cv.notify_all();
  };

  std::vector<std::thread> pool;
  pool.reserve(nt);
  try {
    for (int t = 0; t < nt; ++t) pool.emplace_back(worker, t);
  } catch (...) {
    stop = true;
    for (auto& th : pool) th.join();
    throw;
  }
  {
    std::unique_lock<std::mutex> lk(mu);
    while (running.load() > 0) {
      cv.wait_for(lk, std::chrono::milliseconds(poll_ms));
      if (monitor && !stop.load()) {
        lk.unlock();
        bool keep_going = true;
        try {
          keep_going = monitor(done.load());
        } catch (...) {
          keep_going = false;
        }
        lk.lock();
        if (!keep_going) {
          stop = true;
          status.interrupted = true;
        }
      }
    }
  }
  for (auto& th : pool) th.join();
  status.completed = done.load();
  status.prefix = static_cast<std::size_t>(std::find(finished.begin(), finished.end(), 0) - finished.begin());
  if (error) std::rethrow_exception(error);
  if (monitor && !status.interrupted) monitor(status.completed);
  return status;
}

}  // namespace parallel
}  // namespace scalebayes

// In-order queues of host work, one worker thread each, with CUDA-like
// events between them: the CPU testbed's "streams" (backend.h states the
// semantics). The thread that enqueues never runs or waits for a task.
//
//   HostStreams s(2, /*events=*/1, [](int stream) {});
//   s.Enqueue(0, [] { return Upload(); });
//   s.Record(0, /*event=*/0);
//   s.Wait(1, 0);                             // stream 1 waits for the upload
//   s.Enqueue(1, [] { return Compute(); });
//   const int64_t fence = s.Fence();
//   absl::Status status = s.WaitFence(fence);  // both streams got past here
//
// The first task that fails aborts the streams: the error is kept (sticky),
// waits return at once, and later tasks are skipped, so every stream drains
// and fences are reached; WaitFence then returns the error. Thread-safe for
// one enqueueing thread; blocking is on condition variables (no spinning),
// and each wakes only the threads it concerns: a stream's thread for work
// enqueued on it, waiting streams for a record reached, the enqueuing thread
// for a fence passed. Wake-ups are sent after the lock is released: a
// woken thread of higher priority (the testbed's copy threads against its
// SCHED_IDLE compute thread) preempts the waker at once, and if the waker
// still held the lock, the woken thread would block on it until the waker's
// next time slice, which another process's compute thread on the same core
// can delay by half a millisecond.
//
// A task may come with a `ready` call: made once, the moment the task may
// start (everything before it on its stream done), by whichever thread
// makes it so, not when its stream's thread next gets a core. Devices that
// take turns on a shared core take their place in line there (the testbed's
// compute ops, runtime/core_turns.h): a compute thread woken by a record,
// or preempted by the copy thread its last op's record woke, may wait for a
// time slice while its core mate, ready later, takes the next turn.
//
// Hold() and Release() bracket a batch of enqueues that the streams start
// together: on a machine with fewer cores than threads, streams that start
// while the batch is still being enqueued compete with the enqueuing thread
// and with each other's wake-ups, and start the step unevenly.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"

namespace zosched {

class HostStreams {
 public:
  using Task = std::function<absl::Status()>;

  // Starts `streams` worker threads; each first calls `prepare(stream)`
  // (e.g. to set its scheduling priority). `events`: event ids 0..events-1.
  HostStreams(int streams, int events, std::function<void(int)> prepare);
  ~HostStreams();  // aborts what is queued and joins the threads

  // Runs `task` on `stream` after everything enqueued there before.
  // `ready`, when given, is called once, when the task may start:
  // everything enqueued before it on `stream` is done (a task before it
  // counts as done once it calls Finishing) and no Hold is in force. The
  // thread that makes it so calls it (the stream's own, or the one whose
  // Record releases the stream's Wait), always before the task starts and
  // with the streams' lock held: it must be short, never block and never
  // call back into the streams. A task skipped after an error has had its
  // `ready` call or not.
  void Enqueue(int stream, Task task, std::function<void()> ready = nullptr);
  // Called by the task running on `stream`, and only by it, once its work
  // is done and before it lets go of what it holds: the Records enqueued
  // right behind it are reached now (the streams waiting for them wake),
  // and the task behind them, if it may start now, is ready now (its
  // `ready` call). No Record is reached while a Hold is in force.
  void Finishing(int stream);
  // Marks `event` when `stream` gets here.
  void Record(int stream, int event);
  // Work enqueued on `stream` after this waits for the latest Record of
  // `event` enqueued before this call (none: no wait).
  void Wait(int stream, int event);
  // A point on every stream; returns its ticket (increasing).
  int64_t Fence();
  // Blocks until every stream has passed fence `ticket`; returns the first
  // error of any task so far (OK if none).
  absl::Status WaitFence(int64_t ticket);
  // The first error of any task so far.
  absl::Status error() const;
  // Until Release(), streams finish what they run but start nothing new.
  void Hold();
  void Release();

 private:
  struct Item {
    enum Kind { kTask, kRecord, kWait, kFence } kind;
    Task task;
    std::function<void()> ready;  // kTask: null once called (or none given)
    int event = 0;
    int64_t count = 0;  // kRecord: the record's number; kWait: the one awaited; kFence: ticket
  };
  struct Queue {
    std::deque<Item> items;
    int64_t fence_passed = 0;  // last fence ticket this stream passed
    // While the stream's thread is in a Wait: the event and the record
    // number it waits for (event -1: none).
    int waiting_event = -1;
    int64_t waiting_count = 0;
    bool running = false;  // its thread is in a task (before its Finishing)
    // Items enqueued, Release(), stop, an error, or the record it waits
    // for reached: the only things its thread sleeps on.
    std::condition_variable work;
  };

  void Loop(int stream, const std::function<void(int)>& prepare);
  // With mu_ held: makes the `ready` call of the first task in `q` if it
  // may start now (none while q's thread runs a task).
  void MarkReady(Queue& q);
  // The streams' condition variables to notify once mu_ is unlocked.
  using Released = absl::InlinedVector<std::condition_variable*, 8>;
  // With mu_ held: `record` (a kRecord) is reached; the waiting streams it
  // releases go into `released`.
  void PassRecord(const Item& record, Released* released);
  void Push(int stream, Item item);

  // Wakes everything: an error or stop changes every wait's outcome.
  void NotifyAll();

  mutable std::mutex mu_;
  std::condition_variable fences_passed_;  // a fence passed (WaitFence)
  std::vector<Queue> queues_;
  std::vector<int64_t> records_enqueued_;  // per event
  std::vector<int64_t> records_reached_;   // per event
  int64_t fences_ = 0;
  absl::Status error_;
  bool held_ = false;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace zosched

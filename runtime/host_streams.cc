#include "runtime/host_streams.h"

#include <algorithm>
#include <utility>

namespace zosched {

HostStreams::HostStreams(int streams, int events, std::function<void(int)> prepare)
    : queues_(streams), records_enqueued_(events, 0), records_reached_(events, 0) {
  for (int s = 0; s < streams; ++s) {
    threads_.emplace_back([this, s, prepare] { Loop(s, prepare); });
  }
}

HostStreams::~HostStreams() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    if (error_.ok()) error_ = absl::CancelledError("the streams were stopped");
    NotifyAll();
  }
  for (std::thread& t : threads_) t.join();
}

void HostStreams::NotifyAll() {
  for (Queue& q : queues_) q.work.notify_all();
  fences_passed_.notify_all();
}

void HostStreams::Push(int stream, Item item) {
  Queue& q = queues_[stream];
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    q.items.push_back(std::move(item));
    wake = !held_;
  }
  if (wake) q.work.notify_one();
}

void HostStreams::Hold() {
  std::lock_guard<std::mutex> lock(mu_);
  held_ = true;
}

void HostStreams::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
  }
  for (Queue& q : queues_) q.work.notify_one();
}

void HostStreams::Enqueue(int stream, Task task, std::function<void()> ready) {
  Item item{Item::kTask, std::move(task), std::move(ready)};
  Push(stream, std::move(item));
}

void HostStreams::Finishing(int stream) {
  Released released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Queue& q = queues_[stream];
    q.running = false;
    // The records right behind the task are reached now: the streams
    // waiting for them need not wait until this thread, which may lose its
    // core as soon as it gives its turn away, gets back to its loop.
    while (!held_ && !stop_ && !q.items.empty() && q.items.front().kind == Item::kRecord) {
      PassRecord(q.items.front(), &released);
      q.items.pop_front();
    }
    MarkReady(q);
  }
  for (std::condition_variable* work : released) work->notify_one();
}

namespace {

// Makes `item`'s ready call, once.
void CallReady(std::function<void()>& ready) {
  if (ready == nullptr) return;
  const std::function<void()> call = std::move(ready);
  ready = nullptr;
  call();
}

}  // namespace

void HostStreams::MarkReady(Queue& q) {
  if (held_ || stop_ || !error_.ok() || q.running) return;
  // Its thread in a Wait not yet met (the wait is out of q.items).
  if (q.waiting_event >= 0 && records_reached_[q.waiting_event] < q.waiting_count) return;
  for (Item& item : q.items) {
    switch (item.kind) {
      case Item::kRecord:
      case Item::kFence:
        continue;  // passed at once
      case Item::kWait:
        if (records_reached_[item.event] >= item.count) continue;
        return;
      case Item::kTask:
        CallReady(item.ready);
        return;
    }
  }
}

void HostStreams::PassRecord(const Item& record, Released* released) {
  records_reached_[record.event] = std::max(records_reached_[record.event], record.count);
  // Wake only the streams this record releases (with several streams
  // waiting, waking all costs each a futile wake-up). A task it lets start
  // is ready now, whether or not its thread has got to the wait yet.
  for (Queue& other : queues_) {
    if (other.waiting_event == record.event &&
        records_reached_[record.event] >= other.waiting_count) {
      released->push_back(&other.work);
    }
    MarkReady(other);
  }
}

void HostStreams::Record(int stream, int event) {
  Item item{Item::kRecord};
  item.event = event;
  {
    std::lock_guard<std::mutex> lock(mu_);
    item.count = ++records_enqueued_[event];
  }
  Push(stream, std::move(item));
}

void HostStreams::Wait(int stream, int event) {
  Item item{Item::kWait};
  item.event = event;
  {
    std::lock_guard<std::mutex> lock(mu_);
    item.count = records_enqueued_[event];
  }
  if (item.count == 0) return;  // nothing recorded yet: nothing to wait for
  Push(stream, std::move(item));
}

int64_t HostStreams::Fence() {
  int64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ticket = ++fences_;
  }
  for (int s = 0; s < static_cast<int>(queues_.size()); ++s) {
    Item item{Item::kFence};
    item.count = ticket;
    Push(s, std::move(item));
  }
  return ticket;
}

absl::Status HostStreams::WaitFence(int64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  fences_passed_.wait(lock, [&] {
    return stop_ || std::all_of(queues_.begin(), queues_.end(),
                                [&](const Queue& q) { return q.fence_passed >= ticket; });
  });
  return error_;
}

absl::Status HostStreams::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void HostStreams::Loop(int stream, const std::function<void(int)>& prepare) {
  prepare(stream);
  Queue& q = queues_[stream];
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    q.work.wait(lock, [&] { return stop_ || (!held_ && !q.items.empty()); });
    if (stop_) return;
    Item item = std::move(q.items.front());
    q.items.pop_front();
    switch (item.kind) {
      case Item::kTask: {
        if (!error_.ok()) break;  // aborted: skip, so the stream drains
        CallReady(item.ready);
        q.running = true;
        lock.unlock();
        absl::Status status = item.task();
        lock.lock();
        q.running = false;
        if (!status.ok() && error_.ok()) {
          error_ = std::move(status);
          NotifyAll();
        }
        MarkReady(q);
        break;
      }
      case Item::kRecord: {
        Released released;
        PassRecord(item, &released);
        lock.unlock();
        for (std::condition_variable* work : released) work->notify_one();
        lock.lock();
        break;
      }
      case Item::kWait:
        q.waiting_event = item.event;
        q.waiting_count = item.count;
        q.work.wait(lock, [&] {
          return stop_ || !error_.ok() || records_reached_[item.event] >= item.count;
        });
        q.waiting_event = -1;
        if (stop_) return;
        break;
      case Item::kFence:
        q.fence_passed = item.count;
        lock.unlock();
        fences_passed_.notify_all();
        lock.lock();
        break;
    }
  }
}

}  // namespace zosched

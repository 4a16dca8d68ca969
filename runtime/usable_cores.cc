#include "runtime/usable_cores.h"

#include <sched.h>

namespace zosched {
namespace {

// The CPUs of this process's cpuset, ascending: the kernel intersects a
// requested affinity with the cpuset, so asking for every CPU and reading
// back what was granted finds them, whatever mask the thread had. The
// caller's mask is put back.
std::vector<int> ReadUsableCpus() {
  cpu_set_t before;
  CPU_ZERO(&before);
  const bool had_mask = sched_getaffinity(0, sizeof(before), &before) == 0;
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
  cpu_set_t granted = before;
  if (sched_setaffinity(0, sizeof(all), &all) == 0) {
    sched_getaffinity(0, sizeof(granted), &granted);
    if (had_mask) sched_setaffinity(0, sizeof(before), &before);
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &granted)) cpus.push_back(c);
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

const std::vector<int>& UsableCpus() {
  static const std::vector<int>* const cpus = new std::vector<int>(ReadUsableCpus());
  return *cpus;
}

}  // namespace

int UsableCores() { return static_cast<int>(UsableCpus().size()); }

void PinThreadToCores(const std::vector<int>& cores) {
  const std::vector<int>& cpus = UsableCpus();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int core : cores) CPU_SET(cpus[core % cpus.size()], &set);
  sched_setaffinity(0, sizeof(set), &set);
}

void PinThreadToCore(int core) { PinThreadToCores({core}); }

void UnpinThread() {
  std::vector<int> every(UsableCores());
  for (int c = 0; c < UsableCores(); ++c) every[c] = c;
  PinThreadToCores(every);
}

}  // namespace zosched

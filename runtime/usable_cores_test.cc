#include "runtime/usable_cores.h"

#include <sched.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace zosched {
namespace {

cpu_set_t Mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  return set;
}

// The first call comes from a thread pinned to one CPU (as mpirun binds a
// rank): the usable cores are still every CPU the process may run on, and
// the thread keeps its mask.
TEST(UsableCores, CountTheCpusetNotTheCallersMask) {
  const cpu_set_t start = Mask();
  int first = 0;
  while (!CPU_ISSET(first, &start)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const int cores = UsableCores();
  EXPECT_GE(cores, CPU_COUNT(&start));
  EXPECT_LE(cores, sysconf(_SC_NPROCESSORS_ONLN));
  const cpu_set_t after = Mask();
  EXPECT_TRUE(CPU_EQUAL(&after, &one));
  sched_setaffinity(0, sizeof(start), &start);
}

// Core i is the i-th usable CPU, counted mod their number; UnpinThread
// gives them all back.
TEST(UsableCores, PinsByTheirNumbers) {
  const int cores = UsableCores();
  PinThreadToCore(cores);  // wraps to core 0
  const cpu_set_t zero = Mask();
  EXPECT_EQ(CPU_COUNT(&zero), 1);
  PinThreadToCore(0);
  const cpu_set_t again = Mask();
  EXPECT_TRUE(CPU_EQUAL(&zero, &again));
  if (cores > 1) {
    PinThreadToCore(1);
    const cpu_set_t one = Mask();
    EXPECT_EQ(CPU_COUNT(&one), 1);
    EXPECT_FALSE(CPU_EQUAL(&zero, &one));
  }
  UnpinThread();
  const cpu_set_t all = Mask();
  EXPECT_EQ(CPU_COUNT(&all), cores);
}

}  // namespace
}  // namespace zosched

// The cores this process may run on, and pinning threads to them.
//
// A process need not own the whole machine: a container, a batch system's
// allocation or the two-node testbed's nodes (a cpuset cgroup each) give it
// some of the machine's CPUs. The CPU runtime numbers the CPUs it may use
// 0..UsableCores()-1 in ascending order and pins by those numbers, so that
// devices that share cores take turns on the cores they were given, never
// on a CPU the kernel would refuse. A narrower affinity mask that mpirun or
// taskset set on the process does not count: the runtime pins its threads
// itself.
#pragma once

#include <vector>

namespace zosched {

// The number of CPUs the kernel lets this process use (at least 1): those
// of its cpuset, as found the first time any function here is called.
int UsableCores();

// Pins the calling thread to the usable CPUs numbered `cores` (each mod
// UsableCores()). Best effort: a failure only costs timing fidelity.
void PinThreadToCores(const std::vector<int>& cores);
void PinThreadToCore(int core);

// Lets the calling thread run on every usable CPU again.
void UnpinThread();

}  // namespace zosched

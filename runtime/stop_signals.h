// SIGINT, SIGTERM and SIGUSR1 as a request to stop cleanly: the handler
// only records the signal; the trainer checks it between steps, agrees with
// the other ranks to stop (runtime/mpi_world.h: MeetAll), writes a
// checkpoint and exits with 128 + the signal. A second signal while the
// first is being honoured ends the process at once (the default action),
// so a stuck shutdown can still be interrupted.
//
// SIGUSR1 is there because mpirun forwards SIGUSR1 to its ranks while it
// answers SIGINT/SIGTERM by killing them: train's launcher turns a SIGINT or
// SIGTERM into a SIGUSR1 to mpirun (runtime/launcher.h).
#pragma once

namespace zosched {

// Installs the handlers (once per process).
void InstallStopSignalHandlers();

// The first stop signal received (SIGINT, SIGTERM or SIGUSR1), or 0.
int StopSignal();

}  // namespace zosched

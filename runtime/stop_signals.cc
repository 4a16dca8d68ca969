#include "runtime/stop_signals.h"

#include <csignal>
#include <initializer_list>

namespace zosched {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int signal) {
  if (g_stop_signal == 0) g_stop_signal = signal;
}

}  // namespace

void InstallStopSignalHandlers() {
  for (int signal : {SIGINT, SIGTERM, SIGUSR1}) {
    struct sigaction action = {};
    action.sa_handler = OnStopSignal;
    sigemptyset(&action.sa_mask);
    // SA_RESETHAND: the next one takes the default action.
    action.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(signal, &action, nullptr);
  }
}

int StopSignal() { return g_stop_signal; }

}  // namespace zosched

#include "runtime/progress_bar.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace zosched {
namespace {

bool OnTerminal() { return isatty(fileno(stdout)); }

}  // namespace

ProgressBar::ProgressBar(int first_step, int steps)
    : first_step_(first_step), steps_(steps), started_(std::chrono::steady_clock::now()) {}

void ProgressBar::StepDone(int step, double loss, double tokens_per_s) {
  const auto now = std::chrono::steady_clock::now();
  if (step + 1 != steps_ && now - last_shown_ < std::chrono::milliseconds(200)) return;
  last_shown_ = now;
  const double elapsed_s = std::chrono::duration<double>(now - started_).count();
  const double eta_s = elapsed_s / (step - first_step_ + 1) * (steps_ - 1 - step);
  const bool tty = OnTerminal();
  const int width = 24, filled = width * (step + 1) / steps_;
  std::printf("%sstep %d/%d [%s%s] loss %.4f  %.0f tokens/s  ETA %dm%02ds%s",
              tty ? "\r" : "", step + 1, steps_, std::string(filled, '#').c_str(),
              std::string(width - filled, '.').c_str(), loss, tokens_per_s,
              static_cast<int>(eta_s) / 60, static_cast<int>(eta_s) % 60, tty ? "" : "\n");
  std::fflush(stdout);
}

void ProgressBar::EndLine() {
  if (OnTerminal()) std::printf("\n");
}

}  // namespace zosched

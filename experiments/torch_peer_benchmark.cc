// zosched's CPU testbed against what a user would run instead: MeZO on
// PyTorch (experiments/peer/torch_mezo_cpu.py, MeZO's in-place scheme), on
// the same OPT-shaped model (experiments/peer/opt-peer-51m.pbtxt: hidden
// 512, 8 layers, vocabulary 50,272, 51 M parameters), batch 16, sequence 64.
//
//   bazel run //experiments:torch_peer_benchmark [-- --rounds=3 --steps=5 --threads=1]
//
// Each round runs, one after the other, the PyTorch peer, `train
// --strategy=mezo` and `train --strategy=zo2` (one rank on local_cpu; the
// device's compute on --threads cores), so a slow spell of the machine
// falls on all three alike. A run's figure is its median step over --steps
// timed steps (PyTorch's after 2 untimed steps; zosched's after 1, from the
// measured timeline). Prints which BLAS kernel the peer ran, then each
// round (with the peer's GEMM rate, the same kernel on the model's fc1
// shape), then the medians over rounds and the ratios zosched MeZO /
// PyTorch (target: <= 0.6 on one thread) and zosched ZO2 / zosched MeZO
// (target: <= 1.10).
//
// The peer gets the machine's best GEMM: it runs without OPENBLAS_CORETYPE
// and OPENBLAS_L2_SIZE (which, set, hold OpenBLAS to the named kernel, e.g.
// Haswell's AVX2 on an AVX-512 CPU), so that OpenBLAS picks its kernel for
// the CPU; zosched's runs keep this process's environment. Its BLAS and
// OpenMP pools are held to --threads (OPENBLAS_NUM_THREADS,
// OMP_NUM_THREADS, torch.set_num_threads), so that no idle pool thread
// spins on a core the run does not own. When the kernel OpenBLAS ran is
// narrower than the CPU's widest vector ISA, or the BLAS is not OpenBLAS,
// the program warns that the comparison is unfair to PyTorch.
//
// Needs Debian's python3-torch and an optimised BLAS for it
// (libopenblas0-pthread; the reference BLAS is about 10x slower): the
// program says so and exits 2 when `import torch` fails.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/command_line.h"
#include "base/files.h"
#include "base/flag_checks.h"
#include "base/median.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "base/temporary_directory.h"
#include "experiments/testbed_cycle.h"
#include "schedule/timeline.pb.h"

ABSL_FLAG(int32_t, rounds, 3, "rounds of (PyTorch, zosched MeZO, zosched ZO2)");
ABSL_FLAG(int32_t, steps, 5, "timed steps per run");
ABSL_FLAG(int32_t, threads, 1, "cores per run: torch.set_num_threads and train --threads");
ABSL_FLAG(std::string, python, "/usr/bin/python3", "the interpreter with Debian's python3-torch");
ABSL_FLAG(std::string, out_dir, "", "the runs' outputs (default: a fresh /tmp directory)");

namespace zosched {
namespace {

constexpr char kModel[] = "experiments/peer/opt-peer-51m.pbtxt";
constexpr char kPeer[] = "experiments/peer/torch_mezo_cpu.py";
constexpr int kBatch = 16, kSeq = 64;

// What one run of the peer printed (torch_mezo_cpu.py's fields).
struct PeerRun {
  double step_s = 0;       // median step, seconds
  double gemm_gflops = 0;  // the fc1-shaped fp32 GEMM, GFLOP/s
  // The BLAS torch was built against, the library loaded, OpenBLAS's
  // kernel ("none": not OpenBLAS) and its ISA, the CPU's widest ISA, and
  // the ISA of torch's own kernels.
  std::string torch, blas, blas_lib, openblas_core, core_isa, cpu_isa, aten_cpu;
};

// Runs the peer (its log in `log`) and reads its one line, "torch VERSION
// KEY=VALUE ...".
absl::StatusOr<PeerRun> RunPeer(const std::string& log) {
  const std::string threads = absl::StrCat(absl::GetFlag(FLAGS_threads));
  RETURN_IF_ERROR(RunRuntimeProgram(
      "the PyTorch peer",
      {"env", "-u", "OPENBLAS_CORETYPE", "-u", "OPENBLAS_L2_SIZE",
       "OPENBLAS_NUM_THREADS=" + threads, "OMP_NUM_THREADS=" + threads,
       absl::GetFlag(FLAGS_python), kPeer, "--batch", absl::StrCat(kBatch), "--seq",
       absl::StrCat(kSeq), "--steps", absl::StrCat(absl::GetFlag(FLAGS_steps)), "--threads",
       threads},
      log));
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(log, &text));
  std::vector<std::string> words;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "torch ")) words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  }
  if (words.size() < 2) {
    return absl::InternalError(
        absl::StrCat("the PyTorch peer printed no \"torch VERSION ...\" line; see ", log));
  }
  std::map<std::string, std::string> fields;
  for (const std::string& word : words) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
  }
  PeerRun run;
  run.torch = words[1];
  run.blas = fields["blas"];
  run.blas_lib = fields["blas_lib"];
  run.openblas_core = fields["openblas_core"];
  run.core_isa = fields["core_isa"];
  run.cpu_isa = fields["cpu_isa"];
  run.aten_cpu = fields["aten_cpu"];
  if (!absl::SimpleAtod(fields["step_s"], &run.step_s) ||
      !absl::SimpleAtod(fields["gemm_gflops"], &run.gemm_gflops) || run.core_isa.empty() ||
      run.cpu_isa.empty()) {
    return absl::InternalError(absl::StrCat(
        "the PyTorch peer's line lacks step_s, gemm_gflops, core_isa or cpu_isa; see ", log));
  }
  return run;
}

// Which BLAS the peer multiplied with, and a warning when it is not the
// machine's best.
void PrintPeerBlas(const PeerRun& peer) {
  std::printf("PyTorch %s: BLAS %s -> %s, OpenBLAS kernel %s (%s; the CPU's best: %s), "
              "torch's own kernels %s\n",
              peer.torch.c_str(), peer.blas.c_str(), peer.blas_lib.c_str(),
              peer.openblas_core.c_str(), peer.core_isa.c_str(), peer.cpu_isa.c_str(),
              peer.aten_cpu.c_str());
  for (const char* name : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}) {
    if (const char* value = std::getenv(name)) {
      std::printf("(%s=%s here: unset for the peer, kept for zosched)\n", name, value);
    }
  }
  if (peer.core_isa != peer.cpu_isa) {
    std::printf("WARNING: the peer's BLAS kernel (%s, ISA %s) is not the CPU's best (%s): the "
                "comparison is unfair to PyTorch\n",
                peer.openblas_core.c_str(), peer.core_isa.c_str(), peer.cpu_isa.c_str());
  }
}

// zosched's median step in seconds: `train --strategy=STRATEGY` for
// steps + 1 steps, the first left out, from the measured timeline.
absl::StatusOr<double> RunZosched(const std::string& strategy, const std::string& dir) {
  const int steps = absl::GetFlag(FLAGS_steps) + 1;
  RETURN_IF_ERROR(RunRuntimeProgram(
      absl::StrCat("zosched's ", strategy, " run"),
      {"train/train", absl::StrCat("--model=", kModel), "--strategy=" + strategy,
       absl::StrCat("--batch=", kBatch), absl::StrCat("--seq=", kSeq),
       absl::StrCat("--steps=", steps), absl::StrCat("--threads=", absl::GetFlag(FLAGS_threads)),
       "--checkpoint_every=0", "--final_outputs=false", "--out_dir=" + dir},
      dir + ".log"));
  Timeline timeline;
  RETURN_IF_ERROR(ReadProtoFile(dir + "/timeline.pb", &timeline));
  std::vector<double> seconds;
  for (const StepInterval& step : timeline.steps()) {
    if (step.step() > 0) seconds.push_back((step.end_ns() - step.start_ns()) * 1e-9);
  }
  if (seconds.empty()) {
    return absl::InternalError(absl::StrCat("no timed steps in ", dir, "/timeline.pb"));
  }
  return Median(seconds);
}

absl::Status CheckFlags() {
  RETURN_IF_ERROR(CheckFlagRange("rounds", absl::GetFlag(FLAGS_rounds), 1, 100, "rounds"));
  RETURN_IF_ERROR(CheckFlagRange("steps", absl::GetFlag(FLAGS_steps), 1, 1000, "steps"));
  return CheckFlagRange("threads", absl::GetFlag(FLAGS_threads), 1, 256, "cores");
}

// The programs and files come from the runfiles, where `bazel run` starts
// the benchmark.
absl::Status CheckRunfiles() {
  for (const char* path : {"train/train", kModel, kPeer}) {
    if (access(path, R_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          path, " is not here: start the benchmark with bazel run "
                "//experiments:torch_peer_benchmark"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTorch(const std::string& log) {
  const absl::Status s =
      RunRuntimeProgram("python", {absl::GetFlag(FLAGS_python), "-c", "import torch"}, log);
  if (s.ok()) return s;
  return absl::FailedPreconditionError(absl::StrCat(
      "the PyTorch peer needs ", absl::GetFlag(FLAGS_python),
      " with torch: apt-get install python3-torch libopenblas0-pthread (", s.message(), ")"));
}

absl::Status Run() {
  std::string out = absl::GetFlag(FLAGS_out_dir);
  if (out.empty()) {
    ASSIGN_OR_RETURN(out, MakeTemporaryDirectory("zosched_torch_peer", "the benchmark's outputs"));
  }
  const int threads = absl::GetFlag(FLAGS_threads);
  RETURN_IF_ERROR(CheckRunfiles());
  RETURN_IF_ERROR(CheckTorch(out + "/import_torch.log"));
  std::printf("MeZO step, %s, batch %d x seq %d, %d thread(s); outputs in %s\n", kModel, kBatch,
              kSeq, threads, out.c_str());
  std::vector<double> torch, gemm, mezo, zo2;
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    const std::string prefix = absl::StrCat(out, "/round", round, "_");
    ASSIGN_OR_RETURN(const PeerRun peer, RunPeer(prefix + "torch.log"));
    ASSIGN_OR_RETURN(const double m, RunZosched("mezo", prefix + "mezo"));
    ASSIGN_OR_RETURN(const double z, RunZosched("zo2", prefix + "zo2"));
    if (round == 0) {
      PrintPeerBlas(peer);
      std::printf("%-6s %12s %16s %14s %13s\n", "round", "PyTorch s", "its GEMM GFLOP/s",
                  "zosched MeZO", "zosched ZO2");
    }
    torch.push_back(peer.step_s), gemm.push_back(peer.gemm_gflops);
    mezo.push_back(m), zo2.push_back(z);
    std::printf("%-6d %12.3f %16.1f %14.3f %13.3f\n", round, peer.step_s, peer.gemm_gflops, m, z);
    std::fflush(stdout);
  }
  const double t = Median(torch), m = Median(mezo), z = Median(zo2);
  std::printf("%-6s %12.3f %16.1f %14.3f %13.3f\n", "median", t, Median(gemm), m, z);
  std::printf("zosched MeZO / PyTorch = %.2f (target <= 0.60)\n", m / t);
  std::printf("zosched ZO2 / zosched MeZO = %.2f (target <= 1.10)\n", z / m);
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  ParseCommandLineOrExit(
      argc, argv,
      {"torch_peer_benchmark", "",
       "zosched's CPU testbed against MeZO on PyTorch on the same OPT-shaped model: rounds of\n"
       "(PyTorch, train --strategy=mezo, train --strategy=zo2) and their median step times."});
  if (absl::Status s = CheckFlags(); !s.ok()) return ReportError("torch_peer_benchmark", s);
  if (absl::Status s = Run(); !s.ok()) {
    // A missing prerequisite (FailedPrecondition: the runfiles, PyTorch)
    // exits 2; any other error, even one reading the runs' own files, 1.
    ReportError("torch_peer_benchmark", s);
    return s.code() == absl::StatusCode::kFailedPrecondition ? 2 : 1;
  }
  return 0;
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) { return zosched::Main(argc, argv); }

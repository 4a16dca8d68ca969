#include "runtime/cuda/calibration/gpu_calibration.h"

#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/gpu_check.h"
#include "base/status_macros.h"
#include "runtime/calibration/gpu_model_match.h"
#include "runtime/calibration/timing_inputs.h"
#include "runtime/cuda/calibration/calibration_math.h"
#include "runtime/cuda/calibration/calibration_plan.h"
#include "runtime/cuda/comm/gpu_identity_gather.h"
#include "runtime/cuda/comm/host_staged_communicator.h"
#include "runtime/cuda/comm/nccl_communicator.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/nn/gemm.h"
#include "runtime/dtype/convert.h"
#include "runtime/dtype/element.h"
#include "runtime/executor.h"
#include "runtime/host_store_layout.h"
#include "runtime/model_state.h"
#include "runtime/mpi_world.h"
#include "schedule/cluster_lookup.h"

namespace zosched {
namespace {

// ---- Compute ----

// The timings of device `device`'s compute shapes in `schedule`, its share
// run alone on `batches`, one a step (see the header).
absl::StatusOr<std::vector<ShapeTiming>> TimeDevice(const Schedule& schedule, int device,
                                                    const std::vector<StepBatch>& batches,
                                                    const GpuCalibrationOptions& options) {
  const DeviceTimingViews views = TimingViews(schedule, device);
  std::vector<int32_t> words(schedule.training().num_label_words());
  for (size_t k = 0; k < words.size(); ++k) words[k] = 10 + k;
  const std::string& host_name =
      FindDevice(schedule.cluster(), schedule.devices(device).cluster_device())->host();
  // Declared in this order so that each outlives what uses it.
  ASSIGN_OR_RETURN(std::unique_ptr<NodeSharedMemory> host,
                   NodeSharedMemory::Allocate(LayOutHostStore(views.backend, host_name).bytes));
  CudaOptions cuda;
  cuda.allow_tf32 = options.allow_tf32;
  ASSIGN_OR_RETURN(std::unique_ptr<CudaBackend> backend,
                   CudaBackend::Create(views.backend, device, words, host.get(),
                                       /*collectives=*/nullptr, cuda));
  // The parameters a run starts from: on zeros the first update leaves fp16
  // subnormals, whose conversions take a longer path.
  ASSIGN_OR_RETURN(const std::vector<StoredPart> parts,
                   StoredParts(views.backend, device, *backend));
  RETURN_IF_ERROR(InitialiseParts(parts, kTimingInitSeed));
  RETURN_IF_ERROR(backend->PushPersistent());
  ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                   Executor::Create(views.executor, device, backend.get(), Executor::Clock::now()));
  for (int step = 0; step < kComputeWarmupSteps + options.repeats; ++step) {
    // A learning rate > 0: the next step's updates do their full work.
    StepInputs inputs = TimingInputs(batches.at(step));
    inputs.step = step;
    inputs.seed = 7 + step;
    ASSIGN_OR_RETURN(const Executor::StepOutcome outcome, executor->RunStep(inputs));
    (void)outcome;
  }
  return ComputeTimings(views.executor, device, executor->intervals(), kComputeWarmupSteps);
}

absl::StatusOr<std::vector<MeasuredCompute>> MeasureCompute(const GpuCalibrationOptions& options) {
  std::printf("compute ops, each device's share alone through the executor (seconds: min / "
              "median / max over every op of the shape in %d steps, after %d warm-up steps)\n",
              options.repeats, kComputeWarmupSteps);
  std::vector<MeasuredCompute> rows;
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < options.schedules.size(); ++i) {
    const Schedule& s = options.schedules[i];
    for (int device = 0; device < s.devices_size(); ++device) {
      bool new_shape = false;
      for (const Op& op : s.ops()) {
        new_shape |= op.device() == device && op.has_compute() &&
                     !seen.contains(ShapeKey(ComputeShape(s, op.compute())));
      }
      if (!new_shape) continue;
      absl::StatusOr<std::vector<ShapeTiming>> timings =
          TimeDevice(s, device, options.batches.at(i), options);
      if (absl::IsResourceExhausted(timings.status())) {  // the plan does not fit this GPU
        std::printf("  %s, device %d: left out: %s\n", s.name().c_str(), device,
                    std::string(timings.status().message()).c_str());
        continue;
      }
      RETURN_IF_ERROR(timings.status());
      std::printf("  %s, device %d:\n", s.name().c_str(), device);
      for (const ShapeTiming& t : *timings) {
        if (!seen.insert(ShapeKey(t.row)).second) continue;
        rows.push_back(t.row);
        std::printf("    %-18s examples %3d seq %5d elements %11ld: %.6f / %.6f / %.6f (%d runs)\n",
                    t.row.op_class().c_str(), t.row.examples(), t.row.seq_len(),
                    static_cast<long>(t.row.elements()), t.stats.min, t.stats.median,
                    t.stats.max, t.samples);
      }
    }
  }
  return rows;
}

// ---- GEMMs ----

// Untimed launches of each GEMM shape before the timed ones (cuBLAS picks
// and loads its kernel on the first).
constexpr int kGemmWarmups = 3;
// Launches of a shape between one pair of events: one timing is their GPU
// time over this count.
constexpr int kGemmLaunchesPerTiming = 10;
// How long a held stream waits for its launches to be queued before it
// goes on regardless (then the timing is refused, not reported).
constexpr std::chrono::seconds kGateLimit(10);

// A host function that holds its stream until `open` is set, so that the
// launches queued behind it run back to back once it is: events around
// them then time the GPU's work, not the host's enqueueing (a small GEMM
// takes a few microseconds on the GPU and more to enqueue). Gives up after
// kGateLimit, setting `gave_up`, so that a CUDA call that waits for the
// stream cannot hang the calibration.
struct StreamGate {
  std::atomic<bool> open{false};
  std::atomic<bool> gave_up{false};

  static void CUDART_CB Hold(void* self) {
    StreamGate& gate = *static_cast<StreamGate*>(self);
    const auto limit = std::chrono::steady_clock::now() + kGateLimit;
    while (!gate.open.load()) {
      if (std::chrono::steady_clock::now() > limit) {
        gate.gave_up = true;
        return;
      }
      std::this_thread::yield();
    }
  }
};

// The operand buffers, workspace, stream and events of the GEMM timings on
// one GPU; freed on destruction.
struct GemmRig {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* workspace = nullptr;
  int64_t a_bytes = 0, b_bytes = 0;
  DType operands = DTYPE_UNSPECIFIED;  // what a and b hold now
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, end = nullptr;

  absl::Status Allocate(int64_t a_size, int64_t b_size, int64_t c_size) {
    a_bytes = a_size;
    b_bytes = b_size;
    GPU_RETURN_IF_ERROR(cudaMalloc(&a, a_bytes));
    GPU_RETURN_IF_ERROR(cudaMalloc(&b, b_bytes));
    GPU_RETURN_IF_ERROR(cudaMalloc(&c, c_size));
    GPU_RETURN_IF_ERROR(cudaMalloc(&workspace, kGemmWorkspaceBytes));
    GPU_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    GPU_RETURN_IF_ERROR(cudaEventCreate(&start));
    GPU_RETURN_IF_ERROR(cudaEventCreate(&end));
    return absl::OkStatus();
  }
  // Fills a and b with values uniform in [-1, 1) as `dtype`, as a run's
  // operands vary (a constant pattern draws less power than real data, and
  // a GPU's clock follows its power), unless they hold that already.
  absl::Status FillOperands(DType dtype) {
    if (dtype == operands) return absl::OkStatus();
    ASSIGN_OR_RETURN(const ElementType type, ElementOf(dtype, "GEMM"));
    const int64_t element = ElementBytes(type);
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(std::max(a_bytes, b_bytes) / element);
    for (float& v : values) v = uniform(random);
    std::vector<char> bytes(values.size() * element);
    ConvertBuffer(FP32, values.data(), dtype, bytes.data(), static_cast<int64_t>(values.size()));
    GPU_RETURN_IF_ERROR(cudaMemcpy(a, bytes.data(), a_bytes / element * element,
                                   cudaMemcpyHostToDevice));
    GPU_RETURN_IF_ERROR(cudaMemcpy(b, bytes.data(), b_bytes / element * element,
                                   cudaMemcpyHostToDevice));
    operands = dtype;
    return absl::OkStatus();
  }
  ~GemmRig() {
    cudaDeviceSynchronize();
    for (void* p : {a, b, c, workspace}) {
      if (p != nullptr) cudaFree(p);
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
    if (start != nullptr) cudaEventDestroy(start);
    if (end != nullptr) cudaEventDestroy(end);
  }
};

// Times each of `shapes` (GemmShapes's rows) on GPU 0 as the CUDA backend
// launches it (runtime/cuda/nn/gemm.h: one strided-batched cuBLAS call,
// fp32 accumulation, TF32 as `allow_tf32`) on operands of random values:
// kGemmWarmups untimed launches, then `repeats` timings, each of
// kGemmLaunchesPerTiming launches queued behind a StreamGate and run back
// to back between two CUDA events. Returns the rows with seconds = the
// median timing per launch (the GPU's time, the host's enqueueing
// excluded) and `source` set. Errors: CUDA's and cuBLAS's; Internal when
// a held stream gave up waiting (the timing would include the host's).
absl::StatusOr<std::vector<MeasuredGemm>> MeasureGemms(std::vector<MeasuredGemm> shapes,
                                                       int repeats, bool allow_tf32,
                                                       const std::string& source) {
  std::printf("GEMMs, as the CUDA backend launches them (one strided-batched cuBLAS call each, "
              "%d back to back per timing, random operands; seconds per launch: min / median / "
              "max of %d timings after %d warm-up launches)\n",
              kGemmLaunchesPerTiming, repeats, kGemmWarmups);
  if (shapes.empty()) return shapes;
  int64_t a_bytes = 0, b_bytes = 0, c_bytes = 0;
  for (const MeasuredGemm& g : shapes) {
    ASSIGN_OR_RETURN(const ElementType type, ElementOf(g.dtype(), "GEMM"));
    const int64_t element = ElementBytes(type), batch = std::max<int64_t>(1, g.batch());
    a_bytes = std::max(a_bytes, g.m() * g.k() * batch * element);
    b_bytes = std::max(b_bytes, g.k() * g.n() * batch * element);
    c_bytes = std::max(c_bytes, g.m() * g.n() * batch * element);
  }
  GPU_RETURN_IF_ERROR(cudaSetDevice(0));
  GemmRig rig;
  RETURN_IF_ERROR(rig.Allocate(a_bytes, b_bytes, c_bytes));
  ASSIGN_OR_RETURN(std::unique_ptr<Gemm> gemm,
                   Gemm::Create(rig.stream, rig.workspace, kGemmWorkspaceBytes, allow_tf32));
  for (MeasuredGemm& g : shapes) {
    ASSIGN_OR_RETURN(const ElementType type, ElementOf(g.dtype(), "GEMM"));
    RETURN_IF_ERROR(rig.FillOperands(g.dtype()));
    const int64_t batch = std::max<int64_t>(1, g.batch());
    const Gemm::MatrixBatch a{rig.a, g.m(), g.m() * g.k()};
    const Gemm::MatrixBatch b{rig.b, g.k(), g.k() * g.n()};
    const auto launch = [&] {
      return gemm->StridedBatched(type, type, /*transpose_a=*/false, g.m(), g.n(), g.k(), 1.0f, a,
                                  b, rig.c, g.m(), g.m() * g.n(), batch);
    };
    for (int run = 0; run < kGemmWarmups; ++run) RETURN_IF_ERROR(launch());
    std::vector<double> seconds;
    for (int run = 0; run < repeats; ++run) {
      StreamGate gate;
      GPU_RETURN_IF_ERROR(cudaLaunchHostFunc(rig.stream, &StreamGate::Hold, &gate));
      const auto queue = [&]() -> absl::Status {
        GPU_RETURN_IF_ERROR(cudaEventRecord(rig.start, rig.stream));
        for (int i = 0; i < kGemmLaunchesPerTiming; ++i) RETURN_IF_ERROR(launch());
        GPU_RETURN_IF_ERROR(cudaEventRecord(rig.end, rig.stream));
        return absl::OkStatus();
      };
      const absl::Status queued = queue();
      gate.open = true;
      // The held function reads `gate`: it has returned before `gate` goes.
      const cudaError_t synced = cudaStreamSynchronize(rig.stream);
      RETURN_IF_ERROR(queued);
      GPU_RETURN_IF_ERROR(synced);
      if (gate.gave_up) {
        return absl::InternalError(absl::StrFormat(
            "timing the %s GEMM m %d n %d k %d: its launches were not queued within %d s of "
            "holding the stream (a call that waits for the stream?)",
            DType_Name(g.dtype()), g.m(), g.n(), g.k(), static_cast<int>(kGateLimit.count())));
      }
      float ms = 0;
      GPU_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, rig.start, rig.end));
      seconds.push_back(ms * 1e-3 / kGemmLaunchesPerTiming);
    }
    const Stats stats = Summarize(seconds);
    g.set_seconds(stats.median);
    g.set_source(source);
    std::printf("  %-4s m %6ld n %6ld k %6ld batch %4ld: %.2e / %.2e / %.2e s (%.1f TFLOP/s)\n",
                DType_Name(g.dtype()).c_str(), static_cast<long>(g.m()), static_cast<long>(g.n()),
                static_cast<long>(g.k()), static_cast<long>(batch), stats.min, stats.median,
                stats.max, 2.0 * g.m() * g.n() * g.k() * batch / stats.median / 1e12);
  }
  return shapes;
}

// ---- Host link ----

// Two host buffers, two device buffers, two streams and the timing events
// of one GPU's copy measurements; freed on destruction. The host buffers
// are the memory the runtime's host store is (node-shared memory
// registered with CUDA: cuda_backend.cc), not cudaHostAlloc's, so that the
// link is timed as the runtime's uploads and offloads use it.
struct CopyRig {
  static constexpr int64_t kBytes = int64_t{1} << 30;  // the largest copy
  std::unique_ptr<NodeSharedMemory> store;
  bool registered = false;
  char* host[2] = {nullptr, nullptr};
  char* device[2] = {nullptr, nullptr};
  cudaStream_t stream[2] = {nullptr, nullptr};
  cudaEvent_t start = nullptr;
  cudaEvent_t end[2] = {nullptr, nullptr};

  absl::Status Allocate() {
    ASSIGN_OR_RETURN(store, NodeSharedMemory::Allocate(2 * kBytes));
    std::memset(store->data(), 1, 2 * kBytes);
    GPU_RETURN_IF_ERROR(cudaHostRegister(store->data(), 2 * kBytes, cudaHostRegisterDefault));
    registered = true;
    for (int i = 0; i < 2; ++i) {
      host[i] = store->data() + i * kBytes;
      GPU_RETURN_IF_ERROR(cudaMalloc(reinterpret_cast<void**>(&device[i]), kBytes));
      GPU_RETURN_IF_ERROR(cudaMemset(device[i], 1, kBytes));
      GPU_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream[i], cudaStreamNonBlocking));
      GPU_RETURN_IF_ERROR(cudaEventCreate(&end[i]));
    }
    GPU_RETURN_IF_ERROR(cudaEventCreate(&start));
    return absl::OkStatus();
  }
  ~CopyRig() {
    cudaDeviceSynchronize();
    if (registered) cudaHostUnregister(store->data());
    for (int i = 0; i < 2; ++i) {
      if (device[i] != nullptr) cudaFree(device[i]);
      if (stream[i] != nullptr) cudaStreamDestroy(stream[i]);
      if (end[i] != nullptr) cudaEventDestroy(end[i]);
    }
    if (start != nullptr) cudaEventDestroy(start);
  }
};

struct Copy {
  void* dst;
  const void* src;
  cudaMemcpyKind kind;
};

// Runs `copies` (one per stream of `rig`, at most 2) of `bytes` each, all
// started together: one warm-up, then `repeats` timed runs. Returns per copy
// the statistics of the time from the common start to its own end.
absl::StatusOr<std::vector<Stats>> TimeCopies(CopyRig& rig, const std::vector<Copy>& copies,
                                              int64_t bytes, int repeats) {
  std::vector<std::vector<double>> seconds(copies.size());
  for (int run = 0; run <= repeats; ++run) {
    GPU_RETURN_IF_ERROR(cudaEventRecord(rig.start, rig.stream[0]));
    for (size_t c = 0; c < copies.size(); ++c) {
      if (c > 0) GPU_RETURN_IF_ERROR(cudaStreamWaitEvent(rig.stream[c], rig.start, 0));
      GPU_RETURN_IF_ERROR(
          cudaMemcpyAsync(copies[c].dst, copies[c].src, bytes, copies[c].kind, rig.stream[c]));
      GPU_RETURN_IF_ERROR(cudaEventRecord(rig.end[c], rig.stream[c]));
    }
    for (size_t c = 0; c < copies.size(); ++c) {
      GPU_RETURN_IF_ERROR(cudaEventSynchronize(rig.end[c]));
      float ms = 0;
      GPU_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, rig.start, rig.end[c]));
      if (run > 0) seconds[c].push_back(ms * 1e-3);
    }
  }
  std::vector<Stats> stats;
  for (const std::vector<double>& s : seconds) stats.push_back(Summarize(s));
  return stats;
}

absl::StatusOr<HostLinkFigures> MeasureHostLink(int gpu, int repeats) {
  GPU_RETURN_IF_ERROR(cudaSetDevice(gpu));
  CopyRig rig;
  RETURN_IF_ERROR(rig.Allocate());
  const Copy h2d{rig.device[0], rig.host[0], cudaMemcpyHostToDevice};
  const Copy d2h{rig.host[1], rig.device[1], cudaMemcpyDeviceToHost};
  auto gbps = [](int64_t bytes, double s) { return bytes / s / 1e9; };
  std::printf("  GPU %d, node-shared memory registered with CUDA, as the host store (GB/s from "
              "the median of %d runs)\n",
              gpu, repeats);
  HostLinkTimings t;
  const std::vector<int64_t> sizes = {4 << 10,  64 << 10,  1 << 20,   4 << 20,
                                      16 << 20, 64 << 20, 256 << 20, CopyRig::kBytes};
  for (int64_t bytes : sizes) {
    ASSIGN_OR_RETURN(const std::vector<Stats> down, TimeCopies(rig, {h2d}, bytes, repeats));
    ASSIGN_OR_RETURN(const std::vector<Stats> up, TimeCopies(rig, {d2h}, bytes, repeats));
    t.h2d.push_back({bytes, down[0].median});
    t.d2h.push_back({bytes, up[0].median});
    std::printf("    %10ld B  alone: H2D %6.2f (%.1f us)  D2H %6.2f (%.1f us)",
                static_cast<long>(bytes), gbps(bytes, down[0].median), down[0].median * 1e6,
                gbps(bytes, up[0].median), up[0].median * 1e6);
    if (bytes >= (4 << 20)) {
      ASSIGN_OR_RETURN(const std::vector<Stats> both, TimeCopies(rig, {h2d, d2h}, bytes, repeats));
      const double down_gbps = gbps(bytes, both[0].median), up_gbps = gbps(bytes, both[1].median);
      std::printf("  together: H2D %6.2f + D2H %6.2f = %6.2f", down_gbps, up_gbps,
                  down_gbps + up_gbps);
      if (bytes == CopyRig::kBytes) {
        t.h2d_together_gbps = down_gbps;
        t.d2h_together_gbps = up_gbps;
      }
    }
    std::printf("\n");
  }
  ASSIGN_OR_RETURN(const HostLinkFigures f, HostLinkFromTimings(t));
  std::printf("    fit: down %.2f GB/s, up %.2f GB/s, latency %.2f us; duplex (1 GiB each way "
              "at once) %.2f GB/s\n",
              f.down_gbps, f.up_gbps, f.latency_s * 1e6, f.duplex_gbps);
  return f;
}

// Per cluster device: its GPU's host-link figures (device i on GPU i mod gpus,
// each GPU measured once).
absl::StatusOr<std::vector<HostLinkFigures>> MeasureHostLinks(const Cluster& cluster, int gpus,
                                                              int repeats) {
  std::printf("host links: cudaMemcpyAsync between page-locked host memory and the GPU\n");
  std::map<int, HostLinkFigures> by_gpu;
  std::vector<HostLinkFigures> links;
  for (int i = 0; i < cluster.devices_size(); ++i) {
    const int gpu = i % gpus;
    if (!by_gpu.count(gpu)) {
      ASSIGN_OR_RETURN(by_gpu[gpu], MeasureHostLink(gpu, repeats));
    }
    links.push_back(by_gpu[gpu]);
  }
  return links;
}

}  // namespace

int VisibleGpus() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) return 0;
  return gpus;
}

absl::Status CheckGpuVisible() { return RequireVisibleGpus().status(); }

absl::Status CheckClusterIsThisGpu(const Cluster& cluster) {
  RETURN_IF_ERROR(CheckGpuVisible());
  cudaDeviceProp prop;
  GPU_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, 0));
  return CheckClusterDescribesGpu(cluster, prop.name);
}

std::string CatalogClusterOfThisGpu() {
  cudaDeviceProp prop;
  if (VisibleGpus() == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "";
  const std::vector<std::string> names = CatalogClustersOfGpu(prop.name, 1);
  return names.empty() ? "" : names.front();
}

absl::StatusOr<Cluster> CalibrateGpu(const GpuCalibrationOptions& options) {
  RETURN_IF_ERROR(CheckGpuVisible());
  const int gpus = VisibleGpus();
  cudaDeviceProp prop;
  GPU_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, 0));
  const std::string when = absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone());
  std::printf("calibrating on %d x %s (%s)\n", gpus, prop.name, when.c_str());

  ASSIGN_OR_RETURN(const std::vector<MeasuredCompute> compute, MeasureCompute(options));
  ASSIGN_OR_RETURN(std::vector<MeasuredGemm> shapes, GemmShapes(options.schedules));
  ASSIGN_OR_RETURN(
      const std::vector<MeasuredGemm> gemms,
      MeasureGemms(std::move(shapes), options.repeats, options.allow_tf32,
                   absl::StrFormat("calibrate --backend=cuda on %s, %s: cuBLAS strided-batched, "
                                   "random operands, median of %d timings of %d launches back "
                                   "to back%s",
                                   prop.name, when, options.repeats, kGemmLaunchesPerTiming,
                                   options.allow_tf32 ? ", TF32 allowed" : "")));
  ASSIGN_OR_RETURN(const std::vector<HostLinkFigures> links,
                   MeasureHostLinks(options.cluster, gpus, options.repeats));

  Cluster out = options.cluster;
  WriteGpuMeasurements(compute, links, options.collectives, gemms, &out);
  out.set_name(options.cluster.name() + "_calibrated");
  std::string what = "compute op table, GEMM table and host links";
  if (!options.collectives.empty()) absl::StrAppend(&what, ", ", options.collectives_how);
  out.set_description(absl::StrFormat(
      "%s (measured by calibrate --backend=cuda on %d x %s, %s: %s)",
      options.cluster.description(), gpus, prop.name, when, what));
  return out;
}

absl::Status GpuCollectiveProbe(int repeats, const std::string& path) {
  RETURN_IF_ERROR(CheckGpuVisible());
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const int gpu = rank % VisibleGpus();
  GPU_RETURN_IF_ERROR(cudaSetDevice(gpu));
  std::vector<int> group(world);
  for (int r = 0; r < world; ++r) group[r] = r;
  constexpr std::chrono::seconds kTimeout(60);
  ASSIGN_OR_RETURN(std::unique_ptr<MpiCollectives> mpi, MpiCollectives::Create({group}, kTimeout));
  // The communicator the CUDA backend would choose (collective over the world).
  ASSIGN_OR_RETURN(const bool distinct_gpus, GroupsHaveDistinctGpus({group}, gpu));

  constexpr int64_t kLargest = int64_t{64} << 20;
  struct DeviceBuffers {
    char* recv = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, end = nullptr;
    ~DeviceBuffers() {
      if (stream != nullptr) cudaStreamSynchronize(stream);
      if (recv != nullptr) cudaFree(recv);
      if (stream != nullptr) cudaStreamDestroy(stream);
      if (start != nullptr) cudaEventDestroy(start);
      if (end != nullptr) cudaEventDestroy(end);
    }
  } d;  // destroyed after the communicator below
  GPU_RETURN_IF_ERROR(cudaMalloc(reinterpret_cast<void**>(&d.recv), kLargest));
  GPU_RETURN_IF_ERROR(cudaMemset(d.recv, rank, kLargest));
  GPU_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  GPU_RETURN_IF_ERROR(cudaEventCreate(&d.start));
  GPU_RETURN_IF_ERROR(cudaEventCreate(&d.end));

  // One call per size (they share the buffer and run one at a time).
  std::vector<AllGatherCall> calls;
  for (int64_t bytes = 4 << 10; bytes <= kLargest; bytes *= 4) {
    AllGatherCall call;
    call.op_id = calls.size() + 1;
    call.label = absl::StrFormat("rank %d calibration all-gather of %d bytes", rank, bytes);
    call.group = group;
    call.rank_in_group = rank;
    call.device_recv = d.recv;
    call.chunk_bytes = bytes / world;
    calls.push_back(call);
  }
  std::unique_ptr<DeviceCommunicator> comm;
  if (distinct_gpus) {
    ASSIGN_OR_RETURN(comm, NcclCommunicator::Create(calls, mpi.get(), kTimeout));
  } else {
    ASSIGN_OR_RETURN(comm, HostStagedCommunicator::Create(calls, mpi.get()));
  }
  if (rank == 0) {
    std::printf("  %d ranks: all-gathers over %s\n", world,
                distinct_gpus ? "NCCL (each rank has its own GPU)"
                              : "host-staged MPI (ranks share a GPU)");
  }
  std::ostringstream lines;
  for (const AllGatherCall& call : calls) {
    std::vector<double> seconds;
    for (int run = 0; run <= repeats; ++run) {
      MPI_Barrier(MPI_COMM_WORLD);
      GPU_RETURN_IF_ERROR(cudaEventRecord(d.start, d.stream));
      RETURN_IF_ERROR(comm->EnqueueAllGather(call, d.stream));
      GPU_RETURN_IF_ERROR(cudaEventRecord(d.end, d.stream));
      GPU_RETURN_IF_ERROR(cudaEventSynchronize(d.end));
      RETURN_IF_ERROR(comm->AsyncError());
      float ms = 0;
      GPU_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, d.start, d.end));
      if (run > 0) seconds.push_back(ms * 1e-3);
    }
    const Stats s = Summarize(seconds);
    lines << call.chunk_bytes * world << " " << s.median << " " << s.min << " " << s.max << "\n";
  }
  comm.reset();
  if (rank == 0) {
    std::ofstream out(path);
    out << lines.str();
    if (!out.good()) return absl::InternalError("cannot write the probe's results to " + path);
  }
  return absl::OkStatus();
}

}  // namespace zosched

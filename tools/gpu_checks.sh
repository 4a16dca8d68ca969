#!/usr/bin/env bash
# The GPU checks a session runs when it is lent a GPU machine (which has no
# Bazel and no Abseil), packed here and run there in as few calls as its
# device time allows.
#
#   tools/gpu_checks.sh pack                 # here: build --config=cuda, pack into out/device
#   tools/gpu_checks.sh run PHASE [PHASE...] # there, from the repository root
#
# Phases, in the order worth spending device time on:
#   tests      every GPU test (cc tests and the sh tests, each under a timeout);
#              on the GPU machine a skip is a failure: a cc test that reports
#              a skipped test ("[  SKIPPED ]", e.g. it saw no GPU) or an sh
#              test that says "no GPU: skipped" fails the phase
#   benchmark  gpu_zo2_benchmark: ZO2's speed-test setting on OPT-1.3B..30B, Qwen3-1.7B..32B
#   predict    predict_vs_measure --backend=cuda: lowers its 17 schedules,
#              calibrates once for their compute shapes, runs and compares
#   quick      the same for 2 schedules (--quick)
#   calibrate  calibrate --backend=cuda alone (default shapes: opt-tiny)
# benchmark:MODELS and predict:PARTS run a subset (gpu_zo2_benchmark
# --models, predict_vs_measure --only; comma-separated), so that a phase
# fits the device tool's 10 minutes per call, e.g. benchmark:opt-1.3b,opt-6.7b
# then benchmark:opt-13b,opt-30b; predict:opt-1.3b, predict:opt-2.7b, ...
# (predict_vs_measure rewrites its tables after every schedule, so a phase
# cut short keeps what it measured).
# Each phase writes its log (and outputs) under $OUT (the device tool's
# folder that comes back; out/gpu_checks when unset) and a line
# "phase NAME: rc N, S s" to $OUT/summary.txt; a failing phase does not stop
# the next one, and the script exits non-zero if any failed.
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
packed=out/device
cc_tests=(//base:gpu_check_test //runtime/cuda/nn:attention_gpu_test
          //runtime/cuda/nn:element_math_gpu_test //runtime/cuda/nn:decoder_forward_gpu_test
          //runtime/cuda/zo:zo_kernels_gpu_test //runtime/zo:gpu_determinism_test)
# The binaries the sh tests and the experiments run (pack_for_device packs
# binaries, not sh tests: the scripts run from this checkout).
binaries=(//train:train //runtime:calibrate //runtime/cuda:gpu_count
          //runtime/checkpoint:weights_diff
          //runtime/cuda/comm:host_staged_communicator_gpu_check
          //runtime/cuda/comm:nccl_communicator_gpu_check
          //experiments:predict_vs_measure //experiments:gpu_zo2_benchmark)
# sh test script, then its arguments.
sh_tests=("runtime/cuda/cpu_gpu_training_test.sh"
          "runtime/cuda/calibration/gpu_calibration_gpu_test.sh"
          "runtime/cuda/comm/host_staged_communicator_gpu_test.sh"
          "runtime/cuda/comm/nccl_communicator_gpu_test.sh"
          "tests/strategies_bitwise_test.sh --backend=cuda")

usage() { sed -n '2,29p' "$0" >&2; exit 2; }

pack() {
  cd "$top" && "$top/../shared/tools/pack_for_device" "$packed" "${cc_tests[@]}" "${binaries[@]}"
}

# A tree with the binaries where the sh tests and experiments look for them
# (train/train, runtime/cuda/gpu_count, ...), as in Bazel's runfiles.
make_tree() {
  local tree=$1 target rel
  for target in "${binaries[@]}"; do
    rel=${target#//}
    mkdir -p "$tree/${rel%%:*}"
    ln -sf "$top/$packed/bin/${rel##*:}" "$tree/${rel%%:*}/${rel##*:}"
  done
}

# run_phase NAME COMMAND...: the command's output in $out/NAME.log, a line
# in the summary.
failed=0
run_phase() {
  local name=$1 start rc
  shift
  start=$(date +%s)
  "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "phase $name: rc $rc, $(($(date +%s) - start)) s" | tee -a "$out/summary.txt"
  [ "$rc" -eq 0 ] || failed=1
}

tests_phase() {
  local target name script log rc=0
  log=$(mktemp)
  for target in "${cc_tests[@]}"; do
    name=${target##*:}
    echo "=== $name"
    if ! TEST_TMPDIR=$(mktemp -d) TEST_SRCDIR="$top/$packed/bin/$name.runfiles" \
        TEST_WORKSPACE=zosched timeout 600 "$top/$packed/bin/$name" 2>&1 | tee "$log"; then
      echo "FAILED: $name"
      rc=1
    elif grep -q '^\[  SKIPPED \]' "$log"; then
      echo "FAILED: $name skipped tests on the GPU machine"
      rc=1
    fi
  done
  for script in "${sh_tests[@]}"; do
    echo "=== $script"
    # shellcheck disable=SC2086  # the script and its arguments
    if ! (cd "$tree" && TEST_TMPDIR=$(mktemp -d) timeout 900 bash "$top"/$script) 2>&1 |
        tee "$log"; then
      echo "FAILED: $script"
      rc=1
    elif grep -q '^no GPU: skipped$' "$log"; then
      echo "FAILED: $script skipped on the GPU machine"
      rc=1
    fi
  done
  rm -f "$log"
  return "$rc"
}

[ $# -ge 1 ] || usage
case $1 in
  pack) pack; exit ;;
  run) shift ;;
  *) usage ;;
esac
[ $# -ge 1 ] || usage
[ -d "$top/$packed/bin" ] || { echo "gpu_checks: $packed/bin missing: run 'tools/gpu_checks.sh pack' here and carry $packed" >&2; exit 2; }
# shellcheck disable=SC1091
source "$top/$packed/env.sh"
out=${OUT:-$top/out/gpu_checks}
mkdir -p "$out"
tree=$(mktemp -d)
make_tree "$tree"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
for phase in "$@"; do
  arg=${phase#*:}
  [ "$arg" != "$phase" ] || arg=""
  name=${phase//[:,]/_}  # the phase's log and output folder
  case $phase in
    tests) run_phase tests tests_phase ;;
    benchmark | benchmark:*)
      run_phase "$name" "$tree/experiments/gpu_zo2_benchmark" --programs_dir="$tree" \
        --models="$arg" --out_dir="$out/$name" ;;
    calibrate)
      run_phase calibrate "$tree/runtime/calibrate" --backend=cuda \
        --out="$out/h100.calibrated.pbtxt" ;;
    predict | predict:*)
      run_phase "$name" "$tree/experiments/predict_vs_measure" --backend=cuda \
        --programs_dir="$tree" --only="$arg" --out_dir="$out/$name" ;;
    quick)
      run_phase quick "$tree/experiments/predict_vs_measure" --backend=cuda --quick \
        --programs_dir="$tree" --out_dir="$out/predict_vs_measure_quick" ;;
    *) echo "gpu_checks: unknown phase '$phase'" >&2; usage ;;
  esac
done
exit "$failed"

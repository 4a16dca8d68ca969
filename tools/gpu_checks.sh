#!/usr/bin/env bash
# The GPU checks a session runs when it is lent a GPU machine (which has no
# Bazel and no Abseil), packed here and run there in as few calls as its
# device time allows.
#
#   tools/gpu_checks.sh pack                 # here: build --config=cuda, pack into out/device
#   tools/gpu_checks.sh run PHASE [PHASE...] # there, from the repository root
#
# Phases, in the order worth spending device time on:
#   machine    what decides the rest: GPU, driver, compute mode, CUDA and NCCL
#              versions, Open MPI, /dev/shm against the largest host store
#              (OPT-30B in FP16, 60 GB), and every packed binary's libraries
#              that the machine lacks ("not found" fails the phase)
#   tests      every GPU test; tests:NAME,NAME runs those only (a cc test's
#              name, an sh test's file name without .sh, or "cc" for all cc
#              tests). On the GPU machine a skip is a failure: a cc test that
#              reports a skipped test ("[  SKIPPED ]") or an sh test that says
#              "no GPU: skipped" fails
#   benchmark  gpu_zo2_benchmark: ZO2's speed-test setting on OPT-1.3B..30B, Qwen3-1.7B..32B
#   predict    predict_vs_measure --backend=cuda: lowers its 17 schedules,
#              calibrates once for their compute shapes, runs and compares
#   quick      the same for 2 schedules (--quick)
#   calibrate  calibrate --backend=cuda alone (default shapes: opt-tiny)
# benchmark, predict, quick and calibrate take the catalog cluster of this
# machine's GPU (h200_x1 on an H200, else h100_sxm_x1): the calibrated
# cluster comes back as $OUT/<cluster>.calibrated.pbtxt.
# benchmark:MODELS and predict:PARTS run a subset (gpu_zo2_benchmark
# --models, predict_vs_measure --only; comma-separated), e.g.
# benchmark:opt-1.3b,opt-6.7b; predict:opt-1.3b (predict_vs_measure rewrites
# its tables after every schedule, so a phase cut short keeps what it
# measured).
# The device tool gives a command 10 minutes: GPU_CHECKS_BUDGET_S (default
# 540) bounds the whole run, and every command's timeout is cut to what is
# left of it, so that the results are packed before the call's limit.
# The device tool brings back at most 8 files of $OUT (out/gpu_checks when
# unset): the run leaves summary.txt (a line per phase and per test, then
# each phase's table), any calibrated cluster file, and logs.tar.gz with
# every log and output. A failing phase does not stop the next one; the
# script exits non-zero if any failed.
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

usage() { sed -n '2,39p' "$0" >&2; exit 2; }

# The packed tree travels with the working tree under the device tool's
# 64 MiB: a binary that a runfiles tree holds a copy of becomes a link to
# the packed one.
pack() {
  local copy
  cd "$top" && "$top/../shared/tools/pack_for_device" "$packed" "${cc_tests[@]}" "${binaries[@]}" ||
    return
  find "$packed/bin" -path '*.runfiles/*' -type f | while read -r copy; do
    [ -f "$packed/bin/$(basename "$copy")" ] && cmp -s "$copy" "$packed/bin/$(basename "$copy")" &&
      ln -sf "$(realpath --relative-to="$(dirname "$copy")" "$packed/bin/$(basename "$copy")")" "$copy"
  done
  echo "gpu_checks: $(du -sh "$packed" | cut -f1) in $packed after linking the runfiles' copies"
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

# The catalog cluster of this machine's GPU, which the phases predict for
# and calibrate (calibrate refuses a cluster of another GPU model).
machines_cluster() {
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
    "NVIDIA H200"*) echo h200_x1 ;;
    *) echo h100_sxm_x1 ;;
  esac
}

# Seconds left of the run's budget, less 20 for packing the results.
left() { echo $((deadline - $(date +%s) - 20)); }

# bounded SECONDS COMMAND...: the command under a timeout of SECONDS or what
# is left of the budget, whichever is less; exit 124 when cut.
bounded() {
  local want=$1 have
  shift
  have=$(left)
  [ "$have" -gt 0 ] || { echo "gpu_checks: the budget is spent: not run: $*"; return 124; }
  [ "$have" -ge "$want" ] || want=$have
  timeout -k 5 "$want" "$@"
}

# run_phase NAME COMMAND...: the command's output in $logs/NAME.log, a line
# in the summary.
failed=0
run_phase() {
  local name=$1 start rc
  shift
  start=$(date +%s)
  "$@" >"$logs/$name.log" 2>&1
  rc=$?
  echo "phase $name: rc $rc, $(($(date +%s) - start)) s" | tee -a "$summary"
  [ "$rc" -eq 0 ] || failed=1
}

# note_test NAME RC SECONDS LOG: a line in the summary for one test.
note_test() {
  local verdict=pass
  if [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then verdict="FAILED (timed out)"
  elif [ "$2" -ne 0 ]; then verdict="FAILED (exit $2)"
  elif grep -q '^\[  SKIPPED \]\|^no GPU: skipped$' "$4"; then verdict="FAILED (skipped on the GPU machine)"
  fi
  echo "  test $1: $verdict, $3 s" | tee -a "$summary"
  [ "$verdict" = pass ]
}

selected() {  # selected NAME KIND: whether tests:ARG picks this test
  [ -z "$arg" ] && return 0
  [[ ",$arg," == *",$1,"* ]] && return 0
  [ "$2" = cc ] && [[ ",$arg," == *",cc,"* ]]
}

tests_phase() {
  local target name script log start rc=0 code
  for target in "${cc_tests[@]}"; do
    name=${target##*:}
    selected "$name" cc || continue
    echo "=== $name"
    log="$logs/test_$name.log"
    start=$(date +%s)
    TEST_TMPDIR=$(mktemp -d) TEST_SRCDIR="$top/$packed/bin/$name.runfiles" TEST_WORKSPACE=zosched \
      bounded 120 "$top/$packed/bin/$name" >"$log" 2>&1
    code=$?
    tail -3 "$log"
    note_test "$name" "$code" "$(($(date +%s) - start))" "$log" || rc=1
  done
  for script in "${sh_tests[@]}"; do
    name=$(basename "${script%% *}" .sh)
    selected "$name" sh || continue
    echo "=== $script"
    log="$logs/test_$name.log"
    start=$(date +%s)
    # shellcheck disable=SC2086  # the script and its arguments
    (cd "$tree" && TEST_TMPDIR=$(mktemp -d) bounded 300 bash "$top"/$script) >"$log" 2>&1
    code=$?
    tail -3 "$log"
    note_test "$name" "$code" "$(($(date +%s) - start))" "$log" || rc=1
  done
  return "$rc"
}

machine_phase() {
  local bin lib missing=0
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode,clocks.max.sm \
    --format=csv
  nvidia-smi | sed -n '1,12p'
  command -v nvcc >/dev/null && nvcc --version | tail -1
  echo "NCCL: $(ldconfig -p | grep -o 'libnccl.so[.0-9]*' | sort -u | tr '\n' ' ')"
  find / -xdev -name 'libnccl.so*' 2>/dev/null | head -3
  echo "Open MPI: $(mpirun --version 2>&1 | head -1)"
  echo "LD_LIBRARY_PATH: ${LD_LIBRARY_PATH:-}"
  echo "CPUs: $(nproc); memory: $(free -g | awk '/Mem:/ {print $2 " GB, " $7 " GB available"}')"
  df -h /dev/shm /tmp | tail -n +2
  # The largest host store the benchmark holds: OPT-30B in FP16.
  awk '{ if ($2 * 1024 < 60e9) print "/dev/shm holds " $2 / 1e6 " GB: less than OPT-30B in FP16 (60 GB)" }' \
    < <(df -k --output=target,size /dev/shm | tail -1)
  for bin in "$top/$packed"/bin/*; do
    [ -f "$bin" ] || continue
    lib=$(ldd "$bin" | grep 'not found')
    if [ -n "$lib" ]; then
      echo "$(basename "$bin") lacks: $(echo "$lib" | awk '{print $1}' | tr '\n' ' ')"
      missing=1
    fi
  done
  [ "$missing" -eq 0 ] && echo "every packed binary finds its libraries"
  return "$missing"
}

# The tables a phase leaves, copied into the summary.
append_tables() {
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    printf '\n--- %s\n' "${f#"$logs"/}" >>"$summary"
    cat "$f" >>"$summary"
  done
}

# Everything but the summary and calibrated clusters into one archive of at
# most 15 MiB (the device tool brings back 16 MiB a file): the largest files
# (traces) are left out first, and named in the summary.
pack_results() {
  local size dropped
  (cd "$out" && find logs -type f -size +4M -printf '%s %p\n' | sort -rn) | while read -r size dropped; do
    tar -C "$out" -czf "$out/logs.tar.gz" logs 2>/dev/null
    [ "$(stat -c %s "$out/logs.tar.gz")" -le $((15 * 1024 * 1024)) ] && break
    echo "left out of logs.tar.gz (too large): $dropped ($size bytes)" >>"$summary"
    rm -f "$out/$dropped"
  done
  tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs"
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
# Where the machine's loader lacks a library the binaries need (NCCL and
# cuBLAS can come with Python's packages rather than the CUDA toolkit),
# take the packages' copies; the machine phase names them.
if grep -q 'not found' <<<"$(ldd "$top/$packed/bin/train" 2>&1)"; then
  while read -r dir; do
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$dir"
    echo "gpu_checks: libraries also from $dir"
  done < <(find / -xdev -type d -path '*site-packages/nvidia/*/lib' 2>/dev/null)
fi
deadline=$(($(date +%s) + ${GPU_CHECKS_BUDGET_S:-540}))
out=${OUT:-$top/out/gpu_checks}
logs=$out/logs
summary=$out/summary.txt
mkdir -p "$logs"
tree=$(mktemp -d)
make_tree "$tree"
cluster=$(machines_cluster)
for phase in "$@"; do
  arg=${phase#*:}
  [ "$arg" != "$phase" ] || arg=""
  name=${phase//[:,]/_}  # the phase's log and output folder
  case $phase in
    machine) run_phase machine machine_phase; append_tables "$logs/machine.log" ;;
    tests | tests:*) run_phase "$name" tests_phase ;;
    benchmark | benchmark:*)
      run_phase "$name" bounded 600 "$tree/experiments/gpu_zo2_benchmark" --programs_dir="$tree" \
        --cluster="$cluster" --models="$arg" --out_dir="$logs/$name"
      append_tables "$logs/$name/benchmark.md" ;;
    calibrate)
      run_phase calibrate bounded 600 "$tree/runtime/calibrate" --backend=cuda \
        --cluster="$cluster" --out="$out/$cluster.calibrated.pbtxt" ;;
    predict | predict:*)
      run_phase "$name" bounded 600 "$tree/experiments/predict_vs_measure" --backend=cuda \
        --cluster="$cluster" --programs_dir="$tree" --only="$arg" --out_dir="$logs/$name"
      append_tables "$logs/$name"/*.md ;;
    quick)
      run_phase quick bounded 600 "$tree/experiments/predict_vs_measure" --backend=cuda --quick \
        --cluster="$cluster" --programs_dir="$tree" --out_dir="$logs/quick"
      append_tables "$logs/quick"/*.md ;;
    *) echo "gpu_checks: unknown phase '$phase'" >&2; usage ;;
  esac
done
pack_results
exit "$failed"

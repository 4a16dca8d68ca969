#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/BUILD with clang (--config=fuzz:
# libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer) and runs them.
#
#   fuzz/run.sh build [TARGET...]   build only
#   fuzz/run.sh smoke [TARGET...]   each target for $FUZZ_SECONDS seconds
#                                   (default 15): what CI runs
#   fuzz/run.sh long [TARGET...]    each target for $FUZZ_RUNS executions
#                                   (default 1000000)
#
# TARGET: a name from fuzz/BUILD, e.g. bpe_fuzzer; default all of them. Each
# run starts from a copy of the seed corpus fuzz/corpus/TARGET/ in a fresh
# directory, so the repository's corpus is never written; the run's corpus
# and any crashing input stay there (the script prints where) and the
# smoke's are removed when it passes. Prints each target's executions and
# final corpus size (files, bytes). Exits non-zero on the first crash, hang,
# leak or sanitizer report.
#
# Installs clang-14, libclang-rt-14-dev (libFuzzer and the sanitizers'
# runtimes) and lld-14 from Debian when missing, as ./bazelw does for the
# rest. Builds in an output base of its own ($FUZZ_OUTPUT_BASE, default
# ~/.cache/zosched-fuzz), so the gcc build's cache stays.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(schedule_text_fuzzer schedule_binary_fuzzer cluster_fuzzer model_fuzzer
             safetensors_fuzzer trajectory_fuzzer bpe_fuzzer)
mode="${1:-}"
case "$mode" in
  build | smoke | long) shift ;;
  *) echo "usage: fuzz/run.sh build|smoke|long [TARGET...]" >&2; exit 2 ;;
esac
targets=("$@")
((${#targets[@]})) || targets=("${all_targets[@]}")

packages=(clang-14 libclang-rt-14-dev lld-14)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "fuzz/run.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
fi

bazel=(./bazelw --output_base="${FUZZ_OUTPUT_BASE:-$HOME/.cache/zosched-fuzz}" --max_idle_secs=600)
"${bazel[@]}" build --config=fuzz "${targets[@]/#/\/\/fuzz:}"
[ "$mode" = build ] && exit 0
bin="$("${bazel[@]}" info --config=fuzz bazel-bin 2>/dev/null)/fuzz"

work="$(mktemp -d "${TMPDIR:-/tmp}/zosched-fuzz.XXXXXX")"
if [ "$mode" = smoke ]; then
  limit=(-max_total_time="${FUZZ_SECONDS:-15}")
else
  limit=(-runs="${FUZZ_RUNS:-1000000}")
fi
summary=()
for t in "${targets[@]}"; do
  corpus="$work/$t/corpus"
  mkdir -p "$corpus"
  cp fuzz/corpus/"$t"/* "$corpus"/
  echo "=== fuzz: $t ${limit[*]}"
  start=$SECONDS
  if ! "$bin/$t" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$work/$t/" "$corpus" > "$work/$t/log" 2>&1; then
    tail -n 60 "$work/$t/log"
    echo "fuzz/run.sh: $t FAILED; its log, corpus and crashing input are in $work/$t/" >&2
    exit 1
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t/log")"
  files="$(find "$corpus" -type f | wc -l)"
  bytes="$(du -sb "$corpus" | cut -f1)"
  summary+=("$(printf '%-24s %10s executions  %5d s  corpus %5d files %9d bytes' \
                "$t" "$runs" $((SECONDS - start)) "$files" "$bytes")")
  echo "${summary[-1]}"
done
echo "=== fuzz: summary (${limit[*]})"
printf '%s\n' "${summary[@]}"
if [ "$mode" = smoke ]; then
  rm -rf "$work"
else
  echo "corpora and logs: $work"
fi

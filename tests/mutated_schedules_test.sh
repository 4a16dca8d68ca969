#!/usr/bin/env bash
# Schedules a user's edit breaks, fed to every tool that reads one: inspect,
# simulate and train must each refuse it with exit status 2 and a message
# naming what is wrong, within a minute (no crash, no CHECK failure, no
# hang). The mutations come from mutate_schedule.cc; the unreadable files
# (empty, a directory, a device, garbage) are made here.
set -uo pipefail
inspect="$PWD/schedule/inspect"
simulate="$PWD/sim/simulate"
train="$PWD/train/train"
dir="$TEST_TMPDIR/mutated"
mkdir -p "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }

tests/mutate_schedule --out_dir="$dir" || fail "mutate_schedule exited $?"

# run_all FILE EXPECT: every tool exits 2 and prints EXPECT.
run_all() {
  local file="$1" want="$2"
  for tool in inspect simulate train; do
    case $tool in
      inspect) cmd=("$inspect" "$file") ;;
      simulate) cmd=("$simulate" --schedule="$file") ;;
      train) cmd=("$train" --schedule="$file" --steps=1 --out_dir="$TEST_TMPDIR/train") ;;
    esac
    out=$(timeout 60 "${cmd[@]}" 2>&1); code=$?
    [ "$code" -ne 124 ] || fail "$tool hung on $file"
    [ "$code" -eq 2 ] || fail "$tool exited $code (want 2) on $file: $out"
    grep -qF -- "$want" <<<"$out" || fail "$tool on $file: no '$want' in: $out"
  done
  echo "ok: $(basename "$file"): $want"
}

count=0
for pb in "$dir"/*.pb; do
  run_all "$pb" "$(cat "${pb%.pb}.expect")"
  count=$((count + 1))
done
[ "$count" -ge 21 ] || fail "only $count mutated schedules"

: >"$dir/empty.pb"
run_all "$dir/empty.pb" "empty"
mkdir -p "$dir/a_directory.pb"
run_all "$dir/a_directory.pb" "directory"
run_all /dev/zero "not a regular file"
head -c 4096 /dev/urandom >"$dir/garbage.pb"
run_all "$dir/garbage.pb" "garbage.pb"
echo PASS

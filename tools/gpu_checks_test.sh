#!/usr/bin/env bash
# tools/gpu_checks.sh run on this machine (no GPU) over a packed tree made
# here: the machine phase fails and names a library a packed binary lacks;
# a cc test that skips fails its phase; and the run leaves in $OUT what the
# device tool brings back: at most 8 files, each under 16 MiB, none more than
# two folders down, with the logs in logs.tar.gz.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
top="$TEST_TMPDIR/checkout"
mkdir -p "$top/tools" "$top/out/device/bin" "$top/out/device/lib"
cp tools/gpu_checks.sh "$top/tools/"
: >"$top/out/device/env.sh"
# The binary without the solib Bazel linked it against: its library is
# "not found" where it was packed.
cp tools/gpu_checks_test_binary "$top/out/device/bin/train"
# (ldd's output first: grep -q may close the pipe under pipefail.)
libs=$(ldd "$top/out/device/bin/train" 2>&1)
grep -q 'not found' <<<"$libs" || fail "the packed binary finds its library: $libs"
# A cc test of the packed set that reports a skipped test (gpu_check_test
# is one of the packed cc tests).
cat >"$top/out/device/bin/gpu_check_test" <<'SKIP'
#!/usr/bin/env bash
echo "[ RUN      ] Gpu.Check"
echo "[  SKIPPED ] Gpu.Check"
SKIP
chmod +x "$top/out/device/bin/gpu_check_test"
# Plenty of logs, so that packing them is exercised.
export OUT="$TEST_TMPDIR/out"
GPU_CHECKS_BUDGET_S=60 bash "$top/tools/gpu_checks.sh" run machine tests:gpu_check_test >"$TEST_TMPDIR/run.log" 2>&1
code=$?
[ "$code" -ne 0 ] || fail "the run passed: $(cat "$TEST_TMPDIR/run.log")"
summary="$OUT/summary.txt"
[ -s "$summary" ] || fail "no summary.txt: $(cat "$TEST_TMPDIR/run.log")"
grep -q '^phase machine: rc 1' "$summary" || fail "the machine phase did not fail: $(cat "$summary")"
grep -q 'train lacks: libtools_Slibgpu_Uchecks_Utest_Ulib.so' "$summary" ||
  fail "the missing library is not named: $(cat "$summary")"
grep -q 'test gpu_check_test: FAILED (skipped on the GPU machine)' "$summary" ||
  fail "a skipping test passed: $(cat "$summary")"
# What comes back.
files=$(find "$OUT" -type f | wc -l)
[ "$files" -le 8 ] || fail "$files files in \$OUT (the device tool brings back 8): $(find "$OUT")"
deep=$(find "$OUT" -mindepth 4 | head -1)
[ -z "$deep" ] || fail "more than two folders down: $deep"
big=$(find "$OUT" -type f -size +16M | head -1)
[ -z "$big" ] || fail "over 16 MiB: $big"
listing=$(tar tzf "$OUT/logs.tar.gz")
grep -q 'logs/test_gpu_check_test.log' <<<"$listing" || fail "the test's log is not in logs.tar.gz: $listing"
echo PASS

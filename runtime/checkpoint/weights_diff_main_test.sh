#!/usr/bin/env bash
# weights_diff's verdicts as a user's script sees them: exit 0 within the
# tolerance, 1 beyond it or for any NaN/Inf (named: tensor, element, the
# two values), 2 for a path that is not a safetensors file.
set -uo pipefail
diff_tool="$PWD/runtime/checkpoint/weights_diff"
fail() { echo "FAIL: $*" >&2; exit 1; }
# write FILE HEX...: a safetensors file holding one F32 tensor 'w' of the
# given little-endian 4-byte values (hex, e.g. 0000803f for 1.0).
write() {
  local path=$1; shift
  local header="{\"w\":{\"dtype\":\"F32\",\"shape\":[$#],\"data_offsets\":[0,$((4 * $#))]}}"
  local n=${#header}
  printf "$(printf '\\%03o' $((n & 255)) $((n >> 8)) 0 0 0 0 0 0)" >"$path"
  printf '%s' "$header" >>"$path"
  local v
  for v in "$@"; do printf "$(sed 's/../\\x&/g' <<<"$v")" >>"$path"; done
}
one=0000803f half=0000003f nan=0000c07f inf=0000807f
write "$TEST_TMPDIR/clean.safetensors" "$one" "$half"
write "$TEST_TMPDIR/close.safetensors" "$one" 0100003f  # 0.5 + 1 ulp
write "$TEST_TMPDIR/nan.safetensors" "$one" "$nan"
write "$TEST_TMPDIR/inf.safetensors" "$inf" "$half"

# expect CODE "message" A B: weights_diff A B exits CODE and says message.
expect() {
  local want_code=$1 want=$2; shift 2
  out=$(timeout 60 "$diff_tool" "$@" 2>&1); code=$?
  [ "$code" -eq "$want_code" ] || fail "weights_diff $*: exit $code, expected $want_code: $out"
  grep -qF -- "$want" <<<"$out" || fail "weights_diff $*: no '$want' in: $out"
}
expect 0 "overall: max |diff| 5.96e-08, max rel 1.19e-07 (allowed 0.001)" \
  "$TEST_TMPDIR/clean.safetensors" "$TEST_TMPDIR/close.safetensors"
# A NaN used to pass: "max |diff| inf, max rel 0".
expect 1 "tensor 'w' element 1 is nan in $TEST_TMPDIR/nan.safetensors and 0.5 in $TEST_TMPDIR/clean.safetensors" \
  "$TEST_TMPDIR/nan.safetensors" "$TEST_TMPDIR/clean.safetensors"
expect 1 "overall: max |diff| 0, max rel 0 (allowed 0.001) over the finite elements; 1 NaN/Inf elements" \
  "$TEST_TMPDIR/nan.safetensors" "$TEST_TMPDIR/clean.safetensors"
expect 1 "tensor 'w' element 0 is 1 in $TEST_TMPDIR/clean.safetensors and inf in $TEST_TMPDIR/inf.safetensors" \
  "$TEST_TMPDIR/clean.safetensors" "$TEST_TMPDIR/inf.safetensors" --max_rel=1e30
# The same NaN in both files is no match either.
expect 1 "tensor 'w' element 1 is nan in" "$TEST_TMPDIR/nan.safetensors" "$TEST_TMPDIR/nan.safetensors"
expect 2 "$TEST_TMPDIR is a directory; expected a .safetensors file" \
  "$TEST_TMPDIR" "$TEST_TMPDIR/clean.safetensors"
expect 2 "/dev/zero is not a regular file (a character device)" \
  /dev/zero "$TEST_TMPDIR/clean.safetensors"
echo PASS

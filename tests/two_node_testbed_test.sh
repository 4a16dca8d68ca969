#!/usr/bin/env bash
# The two-node testbed end to end, as root (it skips, saying so, for any
# other user): `up` gives each node its hostname, its own /dev/shm and a
# link throttled to its rate; every DistZO2 grid of four devices lowered
# for two_node_cpu and started with mpirun across node1 and node2 trains to
# the checksum of the same grid on one node and of ZO2 on one rank, and
# train --hosts does too, also started on node1 with its $TMPDIR there
# alone (node2's ranks get the schedule over MPI, and neither machine keeps
# a file of the job); --hosts refuses machines
# that do not fit the schedule or cannot be reached; calibrate --hosts measures the NICs at the
# links' rate, and one predicted-vs-measured cycle runs across the nodes; a node whose ranks are killed
# or stopped, or whose link is cut, ends the job in time with a message naming it, and --resume
# then gives the uninterrupted checksum; each node computes on CPUs of its
# own; `down` leaves no namespace, link, bridge, cgroup, /etc/hosts line or
# state directory behind, and `up` twice is `up`
# once. Tagged exclusive and no-sandbox: it changes this machine's network.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
  echo "not root: skipped (the testbed needs root for namespaces, links and tc)"
  exit 0
fi
testbed="$PWD/tools/two_node_testbed.sh"
train="$PWD/train/train"
calibrate="$PWD/runtime/calibrate"
lower="$PWD/schedule/lower"
tmp="$TEST_TMPDIR"
# One such test on this machine at a time (another workspace's waits), and
# never over a testbed someone has up: it would tear theirs down.
exec 9>/run/zosched-testbed-test.lock
flock -w 900 9 || fail "another two-node test held the machine for 15 minutes"
if "$testbed" status >/dev/null 2>&1; then
  fail "the two-node testbed is up (tools/two_node_testbed.sh status): this test sets up and \
removes its own, so run it after tools/two_node_testbed.sh down"
fi
trap '"$testbed" down >/dev/null 2>&1' EXIT

# What this machine has before, to compare after `down`.
snapshot() {
  ip -o link show | sed -n 's/^[0-9]*: \([^:@]*\).*/\1/p' | sort
  ip netns list | sort
  cat /etc/hosts
  ls /sys/fs/cgroup/cpuset /sys/fs/cgroup 2>/dev/null
}
before=$(snapshot)

"$testbed" up --nodes=2 --rate_mbit=400 >"$tmp/up1.log" 2>&1 || fail "up: $(cat "$tmp/up1.log")"
"$testbed" up --nodes=2 --rate_mbit=400 >"$tmp/up2.log" 2>&1 || fail "up again: $(cat "$tmp/up2.log")"
"$testbed" status | grep -q "2 nodes up, 400 Mbit/s" || fail "status: $("$testbed" status)"
[ "$(ip netns list | grep -c '^zs-node')" -eq 2 ] || fail "up twice left $(ip netns list)"
[ "$(grep -c 'zosched-testbed' /etc/hosts)" -eq 2 ] || fail "up twice: $(grep zosched /etc/hosts)"

for k in 1 2; do
  name=$("$testbed" exec "node$k" hostname) || fail "exec node$k"
  [ "$name" = "node$k" ] || fail "node$k calls itself '$name'"
done
# Each node has its own /dev/shm: a file made on node1 is not on node2, nor here.
"$testbed" exec node1 "touch /dev/shm/zs_testbed_probe" || fail "no /dev/shm on node1"
"$testbed" exec node2 "test ! -e /dev/shm/zs_testbed_probe" || fail "node2 sees node1's /dev/shm"
[ ! -e /dev/shm/zs_testbed_probe ] || fail "this machine sees node1's /dev/shm"
# Each node computes on CPUs of its own, held by its cpuset (not a mask a
# process could widen): node1 cannot run on node2's.
cpus=()
for k in 1 2; do
  cpus+=("$("$testbed" exec "node$k" "sed -n 's/^Cpus_allowed_list:\t//p' /proc/self/status")")
done
[ -n "${cpus[0]}" ] && [ -n "${cpus[1]}" ] && [ "${cpus[0]}" != "${cpus[1]}" ] ||
  fail "the nodes' CPUs: node1 '${cpus[0]}', node2 '${cpus[1]}'"
"$testbed" exec node1 "taskset -c ${cpus[1]} true" 2>/dev/null &&
  fail "node1 ran on node2's CPUs (${cpus[1]})"
echo "node1 computes on CPU ${cpus[0]}, node2 on CPU ${cpus[1]}"

# The link is the bottleneck: 40 MB from node2 to node1 take about 0.8 s at
# 400 Mbit/s (TCP gets ~94 % of it), where this machine's loopback would
# take a few ms. Within 25 % of the setting.
cat >"$tmp/rate.py" <<'EOF'
import socket, sys, time
if sys.argv[1] == "recv":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 5999)); s.listen(1); open(sys.argv[2], "w").close()
    c, _ = s.accept(); n = 0; t0 = None
    while True:
        b = c.recv(1 << 20)
        if not b: break
        t0 = t0 or time.time(); n += len(b)
    print("%.1f" % (n * 8 / (time.time() - t0) / 1e6))
else:
    s = socket.create_connection((sys.argv[2], 5999)); b = b"x" * (1 << 20)
    for _ in range(40): s.sendall(b)
    s.close()
EOF
"$testbed" exec node1 "python3 $tmp/rate.py recv $tmp/listening >$tmp/rate.txt" &
receiver=$!
for _ in $(seq 100); do [ -e "$tmp/listening" ] && break; sleep 0.1; done
"$testbed" exec node2 "python3 $tmp/rate.py send node1" || fail "sending from node2 to node1"
wait "$receiver" || fail "receiving on node1"
mbit=$(cat "$tmp/rate.txt")
awk -v r="$mbit" 'BEGIN { exit !(r > 300 && r < 500) }' ||
  fail "node2 -> node1 at $mbit Mbit/s, set to 400"
echo "node2 -> node1: $mbit Mbit/s (set: 400)"

# Every DistZO2 grid of four devices, whose collectives cross the nodes,
# started with mpirun across the two: the checksum of the same grid on one
# node, and of ZO2 on one rank (the determinism contract).
eval "mpi_flags=($("$testbed" mpirun_args))"
zo2=$(timeout 300 "$train" --model=opt-tiny --strategy=zo2 --batch=16 --seq=32 --steps=4 \
  --out_dir="$tmp/zo2" 2>&1) || fail "zo2 on one rank: $zo2"
sum_zo2=$(sed -n 's/^final weights checksum: //p' <<<"$zo2")
for grid in "2 2 false" "1 4 true" "1 4 false" "2 2 true"; do  # P2xD2 sliced last: used below
  read -r p d sliced <<<"$grid"
  name="P${p}xD${d} $([ "$sliced" = true ] && echo sliced || echo naive)"
  for cluster in two_node_cpu local_cpu; do
    "$lower" --model=opt-tiny --cluster="$cluster" --strategy=distzo2 --pertp="$p" --dp="$d" \
      --slicing="$sliced" --batch=16 --seq=32 --out="$tmp/$cluster.pb" >/dev/null ||
      fail "lower $name on $cluster"
  done
  one=$(timeout 300 "$train" --schedule="$tmp/local_cpu.pb" --steps=4 --ranks=4 \
    --out_dir="$tmp/one" --overwrite 2>&1) || fail "$name on one node: $one"
  two=$(timeout 300 mpirun --allow-run-as-root --oversubscribe "${mpi_flags[@]}" \
    --host node1:2,node2:2 -np 4 "$train" --schedule="$tmp/two_node_cpu.pb" --steps=4 \
    --out_dir="$tmp/two" --overwrite 2>&1) || fail "$name on two nodes: $two"
  sum_one=$(sed -n 's/^final weights checksum: //p' <<<"$one")
  sum_two=$(sed -n 's/^final weights checksum: //p' <<<"$two")
  [ -n "$sum_one" ] && [ "$sum_one" = "$sum_two" ] && [ "$sum_two" = "$sum_zo2" ] ||
    fail "DistZO2 $name: two nodes '$sum_two', one node '$sum_one', ZO2 on one rank '$sum_zo2'"
  echo "DistZO2 $name: checksum $sum_two on two nodes, on one, and ZO2's"
done
cp "$tmp/two_node_cpu.pb" "$tmp/two.pb"
cp "$tmp/local_cpu.pb" "$tmp/one.pb"

# train's own launcher across the nodes (--hosts, Open MPI's settings from
# the testbed's environment), and what it refuses before any rank starts.
eval "$("$testbed" env)"
hosts=$(timeout 300 "$train" --schedule="$tmp/two.pb" --steps=4 --hosts=node1:2,node2:2 \
  --out_dir="$tmp/hosts" 2>&1) || fail "train --hosts: $hosts"
sum_hosts=$(sed -n 's/^final weights checksum: //p' <<<"$hosts")
[ "$sum_hosts" = "$sum_one" ] || fail "train --hosts gave '$sum_hosts', one node '$sum_one'"
# The two nodes' halves of the measured timeline share one epoch: no
# collective ends on one node before the other node's member starts it.
grep "clocks disagree" <<<"$hosts" && fail "train --hosts: the nodes' timelines are apart"
refused() {  # refused "message" args...: train exits 2 or 1 before any rank, saying so
  local want="$1"; shift
  err=$(timeout 120 "$train" --schedule="$tmp/two.pb" --steps=4 --out_dir="$tmp/refused" "$@" 2>&1)
  code=$?
  [ "$code" -ne 0 ] && [ "$code" -ne 124 ] || fail "$*: exit $code: $err"
  grep -qF -- "$want" <<<"$err" || fail "$*: '$err' lacks '$want'"
  [ ! -e "$tmp/refused/train.csv" ] || fail "$*: a rank started"
}
refused "rank 2 (device 'cpu2' of schedule host 'node2') would start on 'node1'" \
  --hosts=node1:3,node2:1
refused "machine 'node3' is not reachable" --hosts=node1:2,node3:2
printf 'node1 slots=2\nnode2 slots=2 # the second\n' >"$tmp/hostfile"
refused "--hosts and --hostfile both name the machines" --hosts=node1:4 --hostfile="$tmp/hostfile"
echo "train --hosts: checksum $sum_hosts; misplaced and unreachable machines refused"

# train started on node1, its $TMPDIR on node1's own /dev/shm: node2's ranks
# cannot read the schedule file the launcher writes there and receive it
# over MPI (the testbed's exec comes back to this machine from a node).
"$testbed" exec node1 mkdir -p /dev/shm/launch || fail "mkdir on node1"
inside=$(timeout 300 "$testbed" exec node1 env TMPDIR=/dev/shm/launch "$train" \
  --schedule="$tmp/two.pb" --steps=4 --hosts=node1:2,node2:2 --out_dir="$tmp/inside" 2>&1) ||
  fail "train --hosts started on node1: $inside"
sum_inside=$(sed -n 's/^final weights checksum: //p' <<<"$inside")
[ "$sum_inside" = "$sum_one" ] || fail "train started on node1 gave '$sum_inside', one node '$sum_one'"
# The job leaves nothing behind on either machine: its directory is gone
# from node1, and node2's daemon kept Open MPI's files in a session
# directory of its own that it removed, never at the launcher's path. (The
# testbed's remote shell passes the launcher's environment on, which ssh
# does not, so node2's daemon makes its session base at the same $TMPDIR.)
for k in 1 2; do
  left=$("$testbed" exec "node$k" "find /dev/shm/launch -mindepth 1 2>/dev/null")
  [ -z "$left" ] || fail "the job left $left on node$k"
done
# Where no rank's machine has it: refused, naming the file and what to do.
mkdir -p /dev/shm/zosched-test-launch
TMPDIR=/dev/shm/zosched-test-launch refused "start train on one of the machines the ranks run on" \
  --hosts=node1:2,node2:2
rm -rf /dev/shm/zosched-test-launch
echo "train started on node1: checksum $sum_inside, node2's ranks given the schedule over MPI"

# calibrate across the nodes: each NIC's rate both ways at the link's
# token-bucket rate (400 Mbit/s = 0.05 GB/s, less TCP's headers), its
# latency, and the all-gather's step across the NIC.
# On node1, whose cores calibrate measures as each node's.
cal=$(timeout 600 "$testbed" exec node1 "$calibrate" --cluster=two_node_cpu --hosts=node1,node2 \
  --out="$tmp/two.calibrated.pbtxt" 2>&1) || fail "calibrate --hosts: $cal"
grep "^  node1 (node1) <-> node2 (node2): \|per step across the NIC" <<<"$cal"
nics=$(awk '/^nics \{/ {n = 1} n && /(gbps|in_gbps|latency_s):/ {print $1, $2} /^\}/ {n = 0}' \
  "$tmp/two.calibrated.pbtxt")
[ "$(grep -c 'gbps' <<<"$nics")" -eq 4 ] || fail "calibrated NICs lack rates: $nics"
awk '$1 ~ /gbps/ && ($2 < 0.04 || $2 > 0.05) {exit 1}
     $1 == "latency_s:" && ($2 <= 0 || $2 > 0.001) {exit 1}' <<<"$nics" ||
  fail "calibrated NICs outside 0.04-0.05 GB/s (the links' 400 Mbit/s) or 0-1 ms: $nics"

# One predicted-vs-measured cycle across the nodes: calibrated with the
# NICs, lowered for two_node_cpu, run with train --hosts, compared.
cycle=$(timeout 600 "$testbed" exec node1 "$PWD/experiments/predict_vs_measure" \
  --hosts=node1,node2 --quick --programs_dir="$PWD" --out_dir="$tmp/cycle" 2>&1) ||
  fail "predict_vs_measure --hosts: $cycle"
row=$(grep "^| two_node_distzo2_P2xD2_sliced_transfer-bound |" "$tmp/cycle/predict_vs_measure.md") ||
  fail "predict_vs_measure --hosts wrote no row: $cycle"
grep -q "nic1" "$tmp/cycle/two_node_distzo2_P2xD2_sliced_transfer-bound/two_node_cpu.calibrated.pbtxt" ||
  fail "the cycle's calibration lacks the NICs"
echo "predicted vs measured across the nodes: $row"

# Faults across the nodes. The uninterrupted run of 400 steps, on one node.
full=$(timeout 600 "$train" --schedule="$tmp/one.pb" --steps=400 --ranks=4 \
  --out_dir="$tmp/full" 2>&1) || fail "400 steps on one node: $full"
sum_full=$(sed -n 's/^final weights checksum: //p' <<<"$full")
# interrupted NAME ACTION: starts 400 steps on the two nodes (a checkpoint
# every 20, waits of 10 s at most), waits until 40 steps are logged, runs
# ACTION, and sets `took` (seconds from ACTION to the end) and `said`.
interrupted() {
  local name="$1" action="$2" out="$tmp/$1"
  timeout 600 "$train" --schedule="$tmp/two.pb" --steps=400 --checkpoint_every=20 \
    --collective_timeout_s=10 --hosts=node1:2,node2:2 --out_dir="$out" >"$tmp/$name.log" 2>&1 &
  local job=$!
  for _ in $(seq 600); do
    [ -f "$out/train.csv" ] && [ "$(wc -l <"$out/train.csv")" -gt 40 ] && break
    sleep 0.1
  done
  local start
  start=$(date +%s.%N)
  eval "$action"
  wait "$job"
  local code=$?
  took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  said=$(tr '\r' '\n' <"$tmp/$name.log")
  [ "$code" -ne 0 ] && [ "$code" -ne 124 ] || fail "$name: exit $code after $took s: $said"
}
# resumed NAME: --resume on the two nodes gives the uninterrupted checksum.
resumed() {
  local again
  again=$(timeout 600 "$train" --schedule="$tmp/two.pb" --steps=400 --checkpoint_every=20 \
    --hosts=node1:2,node2:2 --out_dir="$tmp/$1" --resume 2>&1) || fail "$1: --resume: $again"
  local sum
  sum=$(sed -n 's/^final weights checksum: //p' <<<"$again")
  [ "$sum" = "$sum_full" ] || fail "$1: resumed to '$sum', uninterrupted '$sum_full'"
}
# node2's ranks (ACTION's words, evaluated when it runs).
node2_ranks='$(for p in $(ip netns pids zs-node2); do [ "$(cat /proc/$p/comm)" = train ] && echo $p; done)'
# node2's ranks killed: mpirun ends the job at once, naming the rank and node.
interrupted killed "kill -9 $node2_ranks"
grep -q "rank [23] (node node2) was killed by signal 9" <<<"$said" || fail "killed: $said"
awk -v t="$took" 'BEGIN { exit !(t < 10) }' || fail "killed: the job took $took s to end"
resumed killed
echo "node2's ranks killed: the job ended in $took s naming node2; --resume: $sum_full"
# node2's ranks stopped (SIGSTOP: alive to mpirun, silent to the job): the
# ranks' waits end within their 10 s, their heartbeats naming node2 silent,
# and mpirun ends the stopped ranks with the job.
interrupted stopped "kill -STOP $node2_ranks"
grep -q "no heartbeat from machine node2 (ranks 2,3; silent for" <<<"$said" || fail "stopped: $said"
awk -v t="$took" 'BEGIN { exit !(t < 60) }' || fail "stopped: the job took $took s to end"
resumed stopped
echo "node2's ranks stopped: the job ended in $took s naming node2 silent; --resume: $sum_full"
# node2's link cut: the ranks' waits end within their 10 s, naming node2,
# and mpirun, which cannot reach node2 to end its ranks, within 20 s more.
interrupted cut "ip link set zsv2 down"
ip link set zsv2 up
# The link carries traffic again once node2 reaches this machine: a
# connection to a closed port refused (not timed out). Until then mpirun's
# daemon on node2 cannot call back (seen once: the resume refused, node2
# unreachable).
back=""
for _ in $(seq 60); do
  "$testbed" exec node2 "python3 -c \"
import socket
s = socket.socket(); s.settimeout(1)
try: s.connect(('10.77.0.254', 9))
except ConnectionRefusedError: pass
\"" 2>/dev/null && { back=1; break; }
  sleep 0.5
done
[ -n "$back" ] || fail "cut: node2 did not reach this machine within 60 s of its link coming back"
# The meeting names the ranks of node2 it had not heard from: both, or one
# whose arrival crossed the link before the cut.
grep -q "the link to its machine failed (the ranks are on .*node2 (ranks \(2\|3\|2,3\)))" \
  <<<"$said" || fail "cut: $said"
grep -q "no heartbeat from machine node2 (ranks 2,3; silent for" <<<"$said" ||
  fail "cut: no heartbeat named node2 silent: $said"
awk -v t="$took" 'BEGIN { exit !(t < 60) }' || fail "cut: the job took $took s to end"
resumed cut
echo "node2's link cut: the job ended in $took s naming node2; --resume: $sum_full"
grep -m2 "link to its machine\|mpirun had not" <<<"$said" | cut -c1-400

"$testbed" down || fail "down"
trap - EXIT
after=$(snapshot)
[ "$before" = "$after" ] || fail "down left the machine changed: $(diff <(echo "$before") <(echo "$after"))"
[ ! -e /run/zosched-testbed ] || fail "down left /run/zosched-testbed"
"$testbed" status >/dev/null && fail "status says up after down"
echo PASS

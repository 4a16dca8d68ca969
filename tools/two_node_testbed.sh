#!/usr/bin/env bash
# Emulated machines on this one: N "nodes", each a network, UTS and mount
# namespace with its own hostname (node1, node2, ...) and its own /dev/shm,
# joined through a bridge by veth pairs whose traffic a token bucket
# throttles, so that what crosses between nodes crosses a real bottleneck
# (a NIC). Open MPI starts its daemons on a node through `exec` (its rsh
# agent) and the ranks talk TCP across the bridge; ranks of one node share
# that node's /dev/shm, as ranks of one machine do. Each node computes on
# cores of its own: a cpuset cgroup gives node K the K-th equal share of
# this machine's CPUs (one each for two nodes on two cores), so that the
# nodes' ranks never take turns on one core, as on machines of their own.
#
#   tools/two_node_testbed.sh up [--nodes=N] [--rate_mbit=R]   # N >= 2 (2), R > 0 (800)
#   tools/two_node_testbed.sh status                           # exit 0 when up
#   tools/two_node_testbed.sh exec NODE COMMAND [ARGS...]      # run on a node (from here or a node)
#   tools/two_node_testbed.sh mpirun_args                      # the flags mpirun needs
#   eval "$(tools/two_node_testbed.sh env)"                    # the same as OMPI_MCA_ variables
#                                                              # (for train --hosts)
#   tools/two_node_testbed.sh down                             # remove everything
#
# Layout: cgroup zosched-testbed/nodeK in the cpuset hierarchy (v1 or v2);
# bridge zsbr0 (10.77.0.254/24) in this namespace; node K has veth
# zsvK here (on the bridge) and eth0 there (10.77.0.K), `nodeK` in
# /etc/hosts; its namespaces are /run/netns/zs-nodeK (ip netns) and
# /run/zosched-testbed/nodeK.{uts,mnt}. Each node's link is throttled both
# ways (tc tbf on eth0 and on zsvK) to --rate_mbit, so a node sends and
# receives at most that rate, whatever else runs.
#
# `up` first removes what an earlier `up` left (it is idempotent), and
# `down` ends what still runs on the nodes and removes the namespaces, links,
# bridge, cgroups, /etc/hosts lines and the sysctl it changed (bridge-nf
# off, if it was on), leaving the machine as it found it. Both refuse,
# saying why, without root, `ip netns` or a cpuset cgroup controller; `up`
# also refuses more nodes than this machine has CPUs.
set -euo pipefail

readonly STATE=/run/zosched-testbed
readonly BRIDGE=zsbr0
readonly SUBNET=10.77.0
readonly HOSTS_TAG="# zosched-testbed"
readonly BRIDGE_NF=/proc/sys/net/bridge/bridge-nf-call-iptables  # where br_netfilter is loaded

die() { echo "two_node_testbed: $*" >&2; exit 1; }

# The cpuset hierarchy's root: cgroup v1's cpuset mount, or the unified
# (v2) hierarchy where it offers cpuset; empty when neither does.
cpuset_root() {
  if [ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
    echo /sys/fs/cgroup/cpuset
  elif grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    echo /sys/fs/cgroup
  fi
}
readonly CGROUP_NAME=zosched-testbed

# A CPU list ("0-3,6") as one number a line.
expand_cpus() {
  local part
  for part in ${1//,/ }; do
    if [[ "$part" == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (namespaces, links and tc); run it as root"
  command -v ip >/dev/null || die "needs ip (Debian: iproute2)"
  command -v tc >/dev/null || die "needs tc (Debian: iproute2)"
  command -v unshare >/dev/null && command -v nsenter >/dev/null ||
    die "needs unshare and nsenter (Debian: util-linux)"
  ip netns list >/dev/null 2>&1 || die "'ip netns' does not work here: $(ip netns list 2>&1)"
}

nodes_up() {  # the node numbers whose namespaces exist, ascending
  ip netns list 2>/dev/null | sed -n 's/^zs-node\([0-9][0-9]*\).*/\1/p' | sort -n
}

down() {
  need_root
  for k in $(nodes_up); do
    # What still runs there (a daemon or rank of a job whose link was cut).
    local pids
    pids=$(ip netns pids "zs-node$k" 2>/dev/null || true)
    if [ -n "$pids" ]; then kill -9 $pids 2>/dev/null || true; fi
    for ns in uts mnt; do
      if mountpoint -q "$STATE/node$k.$ns" 2>/dev/null; then umount "$STATE/node$k.$ns"; fi
      rm -f "$STATE/node$k.$ns"
    done
    ip link del "zsv$k" 2>/dev/null || true
    ip netns del "zs-node$k"
  done
  # The nodes' cgroups, once the processes killed above have left them.
  local root
  root=$(cpuset_root)
  if [ -n "$root" ] && [ -d "$root/$CGROUP_NAME" ]; then
    local cg
    for cg in "$root/$CGROUP_NAME"/node* "$root/$CGROUP_NAME"; do
      [ -d "$cg" ] || continue
      for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
      [ ! -d "$cg" ] || die "down: cannot remove cgroup $cg (still holds: $(cat "$cg/cgroup.procs"))"
    done
  fi
  # Links whose node is gone (an interrupted up).
  for link in $(ip -o link show 2>/dev/null | sed -n 's/^[0-9]*: \(zsv[0-9][0-9]*\)[@:].*/\1/p'); do
    ip link del "$link" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  if [ -f /etc/hosts ] && grep -q "$HOSTS_TAG" /etc/hosts; then
    # /etc/hosts may be a bind mount (containers): rewrite it in place.
    local kept
    kept=$(grep -v "$HOSTS_TAG" /etc/hosts)
    printf '%s\n' "$kept" >/etc/hosts
  fi
  if [ -f "$STATE/bridge_nf" ] && [ -e "$BRIDGE_NF" ]; then
    cat "$STATE/bridge_nf" >"$BRIDGE_NF" || true
  fi
  # The holder of this machine's mount namespace (see up).
  if [ -f "$STATE/holder.pid" ]; then kill -9 "$(cat "$STATE/holder.pid")" 2>/dev/null || true; fi
  if mountpoint -q "$STATE" 2>/dev/null; then umount "$STATE"; fi
  rm -rf "$STATE"
}

up() {
  local nodes=2 rate=800
  for arg in "$@"; do
    case "$arg" in
      --nodes=*) nodes="${arg#--nodes=}" ;;
      --rate_mbit=*) rate="${arg#--rate_mbit=}" ;;
      *) die "unknown flag '$arg' (expected --nodes=N, --rate_mbit=R)" ;;
    esac
  done
  [[ "$nodes" =~ ^[0-9]+$ ]] && [ "$nodes" -ge 2 ] && [ "$nodes" -le 200 ] ||
    die "--nodes=$nodes: expected a whole number from 2 to 200"
  [[ "$rate" =~ ^[0-9]+$ ]] && [ "$rate" -ge 1 ] ||
    die "--rate_mbit=$rate: expected a whole number of Mbit/s, at least 1"
  need_root
  local root
  root=$(cpuset_root)
  [ -n "$root" ] || die "needs a cpuset cgroup controller (cgroup v1's /sys/fs/cgroup/cpuset or \
cgroup v2 offering cpuset) to give each node cores of its own"
  local cpus
  if [ "$root" = /sys/fs/cgroup/cpuset ]; then
    cpus=($(expand_cpus "$(cat "$root/cpuset.effective_cpus")"))
  else
    cpus=($(expand_cpus "$(cat "$root/cpuset.cpus.effective")"))
  fi
  local per=$(( ${#cpus[@]} / nodes ))
  [ "$per" -ge 1 ] || die "--nodes=$nodes: each node needs a CPU of its own; this machine has \
${#cpus[@]} (${cpus[*]})"
  down
  mkdir -p "$STATE"
  # Persistent mount namespaces are bind mounts of nsfs files: they must lie
  # on a private mount (else the kernel refuses them).
  mount --bind "$STATE" "$STATE"
  mount --make-private "$STATE"
  echo "$nodes $rate" >"$STATE/config"
  # A process that stays in this machine's mount namespace, so that exec
  # called on a node (an mpirun started there) can come back to it: the
  # nodes' namespace files are mounts of this namespace only.
  setsid sleep infinity </dev/null >/dev/null 2>&1 &
  echo $! >"$STATE/holder.pid"
  # Bridged traffic must not go through this machine's iptables.
  if [ -e "$BRIDGE_NF" ]; then
    cat "$BRIDGE_NF" >"$STATE/bridge_nf"
    echo 0 >"$BRIDGE_NF"
  fi
  # The nodes' cpusets: node K on the K-th `per` CPUs.
  mkdir -p "$root/$CGROUP_NAME"
  if [ "$root" = /sys/fs/cgroup/cpuset ]; then
    # v1: a cpuset takes tasks once its cpus and mems are set, its parent's first.
    cat "$root/cpuset.cpus" >"$root/$CGROUP_NAME/cpuset.cpus"
    cat "$root/cpuset.mems" >"$root/$CGROUP_NAME/cpuset.mems"
  else
    # v2: the controller is handed down from the root to the nodes' parent.
    echo +cpuset >"$root/cgroup.subtree_control" &&
      echo +cpuset >"$root/$CGROUP_NAME/cgroup.subtree_control" ||
      die "cannot hand the cpuset controller down to $root/$CGROUP_NAME"
  fi
  ip link add "$BRIDGE" type bridge
  ip addr add "$SUBNET.254/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  local k
  for k in $(seq 1 "$nodes"); do
    local ns="zs-node$k"
    ip netns add "$ns"
    ip link add "zsv$k" type veth peer name eth0 netns "$ns"
    ip link set "zsv$k" master "$BRIDGE"
    ip link set "zsv$k" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$SUBNET.$k/24" dev eth0
    ip -n "$ns" link set eth0 up
    # The token bucket: `rate` Mbit/s each way, bursts of 64 KiB, up to 50 ms
    # of queue (a NIC's buffer) before packets drop and TCP backs off.
    tc qdisc add dev "zsv$k" root tbf rate "${rate}mbit" burst 64kb latency 50ms
    tc -n "$ns" qdisc add dev eth0 root tbf rate "${rate}mbit" burst 64kb latency 50ms
    touch "$STATE/node$k.uts" "$STATE/node$k.mnt"
    # Its hostname, and a /dev/shm of its own in a mount namespace that
    # keeps the rest of this machine's file system.
    nsenter --net="/run/netns/$ns" \
      unshare --uts="$STATE/node$k.uts" --mount="$STATE/node$k.mnt" --propagation private \
      sh -c "hostname node$k && mount -t tmpfs -o mode=1777 tmpfs /dev/shm"
    echo "$SUBNET.$k node$k $HOSTS_TAG" >>/etc/hosts
    local cg="$root/$CGROUP_NAME/node$k" mine
    mine=$(IFS=,; echo "${cpus[*]:$(( (k - 1) * per )):$per}")
    mkdir "$cg"
    echo "$mine" >"$cg/cpuset.cpus"
    if [ "$root" = /sys/fs/cgroup/cpuset ]; then cat "$root/cpuset.mems" >"$cg/cpuset.mems"; fi
    echo "$mine" >"$STATE/node$k.cpus"
  done
  echo "two_node_testbed: $nodes nodes up (node1..node$nodes, $SUBNET.1-$nodes), ${rate} Mbit/s each way per node, $per CPU(s) each"
}

status() {
  [ -f "$STATE/config" ] || { echo "two_node_testbed: down"; return 1; }
  local nodes rate
  read -r nodes rate <"$STATE/config"
  local k cpus=()
  for k in $(seq 1 "$nodes"); do
    [ -e "/run/netns/zs-node$k" ] && mountpoint -q "$STATE/node$k.uts" ||
      { echo "two_node_testbed: node$k is missing (run up again)"; return 1; }
    cpus+=("node$k on CPU $(cat "$STATE/node$k.cpus")")
  done
  echo "two_node_testbed: $nodes nodes up, ${rate} Mbit/s each way per node; $(IFS=,; echo "${cpus[*]}" | sed 's/,/, /g')"
}

node_exec() {
  local node="${1:-}"
  shift || true
  [[ "$node" =~ ^node([0-9]+)$ ]] || die "exec: '$node' is not a node (expected node1, node2, ...)"
  local k="${BASH_REMATCH[1]}"
  [ -e "/run/netns/zs-node$k" ] && [ -e "$STATE/node$k.uts" ] ||
    die "exec: $node is not up (tools/two_node_testbed.sh up)"
  [ $# -gt 0 ] || die "exec: no command for $node"
  if ! mountpoint -q "$STATE/node$k.uts"; then
    # Called on a node (an mpirun started there): its mount namespace lacks
    # the nodes' namespace files, which are mounts made in this machine's.
    # Go back to this machine's first, through the holder `up` started.
    local holder
    holder=$(cat "$STATE/holder.pid" 2>/dev/null) && [ -e "/proc/$holder/ns/mnt" ] ||
      die "exec: $node's namespaces are not visible from here (no holder: run up again)"
    exec nsenter --mount="/proc/$holder/ns/mnt" -- "$(realpath "${BASH_SOURCE[0]}")" exec \
      "$node" "$@"
  fi
  # Into the node's cpuset: what runs there (and all it starts) computes on
  # the node's CPUs alone.
  local root
  root=$(cpuset_root)
  echo $$ >"$root/$CGROUP_NAME/node$k/cgroup.procs" ||
    die "exec: cannot enter $node's cpuset ($root/$CGROUP_NAME/node$k): run up again"
  # Open MPI's rsh launcher passes the daemon's command line as words that
  # a shell must join (as ssh would); run them through sh -c on the node.
  exec nsenter --net="/run/netns/zs-node$k" --uts="$STATE/node$k.uts" \
    --mount="$STATE/node$k.mnt" -- sh -c "cd '$PWD' 2>/dev/null; $*"
}

# Open MPI's settings for the nodes: its daemons start through `exec`, and
# it and the ranks talk TCP on the testbed's subnet.
mca_settings() {
  local self
  self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
  echo "plm_rsh_agent=$self exec"
  echo "oob_tcp_if_include=$SUBNET.0/24"
  echo "btl=tcp,self"
  echo "btl_tcp_if_include=$SUBNET.0/24"
}

mpirun_args() {
  local name value args=()
  while IFS='=' read -r name value; do args+=("--mca $name '$value'"); done < <(mca_settings)
  echo "${args[*]}"
}

env_exports() {
  local name value
  while IFS='=' read -r name value; do echo "export OMPI_MCA_$name='$value'"; done < <(mca_settings)
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  status) status ;;
  exec) shift; node_exec "$@" ;;
  mpirun_args) mpirun_args ;;
  env) env_exports ;;
  *) die "expected up, down, status, exec, mpirun_args or env (see the header of $0)" ;;
esac

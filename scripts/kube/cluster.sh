#!/usr/bin/env bash
# A real Kubernetes cluster on this machine, for tests: etcd, kube-apiserver, kube-controller-manager and
# kube-scheduler, plus one or more nodes, each a kubelet with its own containerd (runc, and gVisor as the
# RuntimeClass "gvisor"). Everything listens on 127.0.0.1; all state lives in one directory; `down` removes
# everything `up` made on the host (processes, mounts, bridges, cgroups, sysctl changes, log links).
#
# usage: scripts/kube/cluster.sh up [--nodes N] [--state DIR] [--image IMAGE]...
#        scripts/kube/cluster.sh down [--state DIR] [--purge]   (--purge: the certificates and logs too)
#        scripts/kube/cluster.sh load [--state DIR] IMAGE...   (from the local Docker engine onto every node)
#        scripts/kube/cluster.sh status [--state DIR]
#        scripts/kube/cluster.sh env [--state DIR]          prints export KUBECONFIG=... (eval "$(... env)")
#        scripts/kube/cluster.sh kubectl [--state DIR] ARGS... runs the cluster's kubectl
#
# Binaries come from scripts/kube/build.sh (DRYDOCK_KUBE_CACHE, default /var/cache/drydock).
# Images are imported from the local Docker engine with `docker save` (default: drydock-sandbox:latest);
# the saved tar is kept in the cache, keyed by image id. Pods use them with imagePullPolicy: Never.
set -euo pipefail
# Nothing fails in silence: a command that stops the script names itself.
trap 'rc=$?; [ "$rc" = 0 ] || echo "cluster: stopped with exit $rc at: $BASH_COMMAND" >&2' EXIT

K8S_VERSION=v1.37.2
CACHE_ROOT=${DRYDOCK_KUBE_CACHE:-/var/cache/drydock}
OUT=$CACHE_ROOT/kubernetes/$K8S_VERSION
BIN=$OUT/bin
CNI_BIN=$OUT/cni/bin
PAUSE_IMAGE=localhost/pause:$K8S_VERSION
RUNC=${RUNC:-$(command -v runc || echo /usr/sbin/runc)}

STATE=${DRYDOCK_KUBE_STATE:-/var/lib/drydock/kube-cluster}
NODES=2
IMAGES=()
PURGE=
CMD=${1:-}; [ $# -gt 0 ] && shift
ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) NODES=${2:?--nodes needs a number}; shift 2 ;;
    --state) STATE=${2:?--state needs a directory}; shift 2 ;;
    --image) IMAGES+=("${2:?--image needs an image}"); shift 2 ;;
    --purge) PURGE=1; shift ;;
    --) shift; ARGS+=("$@"); break ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
[ ${#IMAGES[@]} -gt 0 ] || IMAGES=("${DRYDOCK_IMAGE:-drydock-sandbox:latest}")
STATE=$(realpath -m "$STATE")
case $STATE in /|/var|/var/lib|/tmp|/root|/home) echo "cluster: refusing state dir $STATE" >&2; exit 2 ;; esac
PKI=$STATE/pki KCFG=$STATE/kubeconfig LOGS=$STATE/logs PIDS=$STATE/pids
ADMIN_KUBECONFIG=$KCFG/admin.kubeconfig
APISERVER=https://127.0.0.1:6443
# Names prefixed so `down` can tell ours from anything else on the host.
CG_PREFIX=drydock-kube
BR_PREFIX=dd-kube-br

log() { echo "[$(date -u +%T)] $*"; }
die() { echo "cluster: $*" >&2; exit 1; }
# fail STEP LOG: says which step failed and shows the end of the log to read.
fail() {
  echo "cluster: step '$1' failed${2:+; last lines of $2:}" >&2
  [ -n "${2:-}" ] && [ -f "$2" ] && tail -n 20 "$2" >&2
  echo "cluster: state is in $STATE; run '$0 down --state $STATE' to clean up" >&2
  exit 1
}
kubectl() { "$BIN/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
wait_for() { # TRIES SLEEP CMD...
  local n=$1 s=$2 i; shift 2
  for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep "$s"; done
  return 1
}
# start NAME LOG CMD...: a detached process (own session), its PID recorded in $PIDS/NAME
start() {
  local name=$1 logf=$2; shift 2
  setsid "$@" >"$logf" 2>&1 < /dev/null &
  echo $! > "$PIDS/$name"
}

# Node names must resolve to 127.0.0.1: the apiserver reaches each kubelet by its hostname, and a kubelet
# refuses a loopback node IP. The machine's hostname and localhost usually do; other 127.0.0.1 names in
# /etc/hosts come after them.
node_names() {
  local names=() n seen=" "
  for n in "$(hostname)" localhost $(awk '$1 == "127.0.0.1" { for (i = 2; i <= NF; i++) print $i }' /etc/hosts); do
    case $seen in *" $n "*) continue ;; esac
    [ "$(getent ahostsv4 "$n" 2>/dev/null | awk 'NR == 1 { print $1 }')" = 127.0.0.1 ] || continue
    names+=("$n"); seen="$seen$n "
  done
  echo "${names[@]}"
}

cgroup_v1() { [ -d /sys/fs/cgroup/cpuset ] && [ -e /sys/fs/cgroup/cpuset/cgroup.procs ]; }
# The kubelet's cgroupRoot must exist (in every hierarchy on cgroup v1, with cpuset initialized).
make_cgroup_root() {
  local name=$1 h
  if cgroup_v1; then
    for h in /sys/fs/cgroup/*/; do [ -e "$h/cgroup.procs" ] && mkdir -p "$h$name"; done
    cat /sys/fs/cgroup/cpuset/cpuset.cpus > "/sys/fs/cgroup/cpuset/$name/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems > "/sys/fs/cgroup/cpuset/$name/cpuset.mems"
  else
    mkdir -p "/sys/fs/cgroup/$name"
    local c; for c in $(cat /sys/fs/cgroup/cgroup.subtree_control); do echo "+$c" > "/sys/fs/cgroup/$name/cgroup.subtree_control" 2>/dev/null || true; done
  fi
}
cgroup_dirs() { # every cgroup directory whose top level is one of ours
  local h
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [ -e "$h/cgroup.procs" ] || continue
    find "$h" -maxdepth 1 -mindepth 1 -type d -name "$CG_PREFIX-*" 2>/dev/null
  done
  return 0
}

# The sysctls a kubelet sets at start (with protectKernelDefaults off), and the one the CNI bridge sets.
SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables)

gen_pki() {
  mkdir -p "$PKI"; cd "$PKI"
  [ -f ca.crt ] && [ -f .nodes ] && [ "$(cat .nodes)" = "$*" ] && return 0
  rm -f ./*.crt ./*.key ./*.pub ./*.srl
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=drydock-test-cluster-ca" 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  cert() { # NAME SUBJECT [SAN]
    local n=$1 subj=$2 san=${3:-}
    openssl req -newkey rsa:2048 -nodes -keyout "$n.key" -out "$n.csr" -subj "$subj" 2>/dev/null
    if [ -n "$san" ]; then printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" > "$n.ext"
    else printf 'extendedKeyUsage=clientAuth\n' > "$n.ext"; fi
    openssl x509 -req -in "$n.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$n.crt" -days 3650 -extfile "$n.ext" 2>/dev/null
    rm -f "$n.csr" "$n.ext"
  }
  cert apiserver "/CN=kube-apiserver" "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  cert admin "/O=system:masters/CN=kubernetes-admin"
  cert controller-manager "/CN=system:kube-controller-manager"
  cert scheduler "/CN=system:kube-scheduler"
  local node; for node in "$@"; do cert "kubelet-$node" "/O=system:nodes/CN=system:node:$node"; done
  chmod 600 ./*.key
  echo "$*" > .nodes
}

kubeconfig() { # FILE USER CERT
  cat > "$KCFG/$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: drydock-test
  cluster:
    server: $APISERVER
    certificate-authority: $PKI/ca.crt
users:
- name: $2
  user:
    client-certificate: $PKI/$3.crt
    client-key: $PKI/$3.key
contexts:
- name: drydock-test
  context: {cluster: drydock-test, user: $2}
current-context: drydock-test
YAML
}

start_control_plane() {
  log "etcd"
  start etcd "$LOGS/etcd.log" "$BIN/etcd" --name local --data-dir "$STATE/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster local=http://127.0.0.1:2380 --listen-metrics-urls "" --unsafe-no-fsync
  wait_for 100 0.2 curl -sf http://127.0.0.1:2379/health || fail "etcd start" "$LOGS/etcd.log"
  log "kube-apiserver"
  # --endpoint-reconciler-type=none: the apiserver refuses to advertise a loopback address otherwise.
  start kube-apiserver "$LOGS/kube-apiserver.log" "$BIN/kube-apiserver" \
    --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=127.0.0.1 --secure-port=6443 --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" --client-ca-file="$PKI/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=Hostname,InternalIP \
    --allow-privileged=true --profiling=false
  wait_for 600 0.2 curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$APISERVER/readyz" \
    || fail "kube-apiserver start (waited 120 s for /readyz)" "$LOGS/kube-apiserver.log"
  log "kube-controller-manager, kube-scheduler"
  local k=$KCFG/controller-manager.kubeconfig
  start kube-controller-manager "$LOGS/kube-controller-manager.log" "$BIN/kube-controller-manager" \
    --kubeconfig="$k" --authentication-kubeconfig="$k" --authorization-kubeconfig="$k" \
    --bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" --use-service-account-credentials=true \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key"
  k=$KCFG/scheduler.kubeconfig
  start kube-scheduler "$LOGS/kube-scheduler.log" "$BIN/kube-scheduler" \
    --kubeconfig="$k" --authentication-kubeconfig="$k" --authorization-kubeconfig="$k" \
    --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false
}

containerd_config() { # I NODE_DIR
  local i=$1 n=$2
  mkdir -p "$n/containerd" "$n/cni/net.d"
  cat > "$n/containerd/config.toml" <<TOML
version = 3
root = "$n/containerd/root"
state = "$n/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.erofs", "io.containerd.differ.v1.erofs", "io.containerd.nri.v1.nri"]
[grpc]
  address = "$n/containerd.sock"
[ttrpc]
  address = "$n/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$n/containerd/opt"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$PAUSE_IMAGE"
[plugins."io.containerd.cri.v1.runtime"]
  enable_selinux = false
  # CRI gives the pause container oom_score_adj -998, which needs CAP_SYS_RESOURCE
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$RUNC"
        Root = "$n/containerd/runc-root"
        SystemdCgroup = false
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runsc.v1"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runsc.options]
        TypeUrl = "io.containerd.runsc.v1.options"
        ConfigPath = "$n/containerd/runsc.toml"
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_BIN"]
    conf_dir = "$n/cni/net.d"
    max_conf_num = 1
[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
TOML
  cat > "$n/containerd/runsc.toml" <<TOML
binary_name = "$BIN/runsc"
root = "$n/containerd/runsc-root"
# As drydock's Docker set-up registers runsc: no network stack at all in a gVisor box (a second
# wall behind the node firewall), and no host unix socket (boxes have no host path).
[runsc_config]
  network = "none"
TOML
  # A bridge per node, no masquerade: pods reach their node's bridge address, nothing beyond it.
  cat > "$n/cni/net.d/10-bridge.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "drydock-test",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BR_PREFIX$i",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {"type": "host-local", "dataDir": "$n/cni/ipam", "ranges": [[{"subnet": "10.244.$i.0/24"}]]}
    }
  ]
}
JSON
}

kubelet_config() { # I NODE_DIR
  local i=$1 n=$2 port=$((10250 + 10 * ($1 - 1))) hport=$((10248 + 10 * ($1 - 1)))
  mkdir -p "$n/kubelet" "$n/pod-logs"
  cat > "$n/kubelet-config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $hport
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$n/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /$CG_PREFIX-n$i
failSwapOn: false
failCgroupV1: false
clusterDomain: cluster.local
clusterDNS: [10.96.0.10]
resolvConf: /etc/resolv.conf
# imported images cannot be pulled again: never collect them, evict only at a nearly full disk
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
podLogsDir: $n/pod-logs
makeIPTablesUtilChains: false
# A Pod has no process limit of its own: the kubelet's caps every Pod on the node. 1024 is what
# drydock gives a gVisor box's host threads (runscHostPids(256)): a runc box gets it too, and a
# gVisor box's own processes are held to 256 inside its sandbox (RLIMIT_NPROC).
podPidsLimit: 1024
YAML
}

# The images to import: saved from Docker once per image id, kept in the cache.
save_images() {
  mkdir -p "$OUT/images"
  local img id tar
  SAVED=("$OUT/images/pause.tar")
  [ -s "$OUT/images/pause.tar" ] || die "the pause image is missing: run scripts/kube/build.sh"
  for img in "${IMAGES[@]}"; do
    id=$(docker image inspect --format '{{.Id}}' "$img" 2>/dev/null) \
      || die "image $img is not in the local Docker engine (build it with 'drydock image build', or pass --image)"
    id=${id#sha256:}
    tar=$OUT/images/$(echo "$img" | tr '/:' '__')-${id:0:12}.tar
    if [ ! -s "$tar" ]; then
      log "docker save $img"
      docker save -o "$tar.tmp" "$img" || fail "docker save $img"
      mv "$tar.tmp" "$tar"
    fi
    SAVED+=("$tar")
  done
}

import_images() { # I NODE_DIR: runs in the background per node
  local i=$1 n=$2 t
  for t in "${SAVED[@]}"; do
    "$BIN/ctr" -a "$n/containerd.sock" -n k8s.io images import "$t" >> "$LOGS/import-n$i.log" 2>&1 || return 1
  done
}

# The node firewall: what replaces NetworkPolicy enforcement here (the bridge CNI enforces none, and
# kube-network-policies needs nftables' queue, which this kernel lacks). Every packet a pod sends
# into its node's bridge is dropped, to the host (INPUT) and to anything beyond, another pod on the
# same bridge included (FORWARD: bridged frames pass iptables with br_netfilter's
# bridge-nf-call-iptables, which up turns on and down restores). IPv4 and IPv6, so link-local
# addresses are closed too. Replies to the kubelet's exec streams do not use the pod network.
FW_COMMENT=drydock-kube-deny-all
firewall_rules() { # ACTION(-I|-D|-C): prints nothing, returns the last tool's status
  local t c ok=0
  for t in iptables ip6tables; do
    for c in INPUT FORWARD; do
      if [ "$1" = -I ]; then
        "$t" -w -C "$c" -i "$BR_PREFIX+" -m comment --comment "$FW_COMMENT" -j DROP 2>/dev/null \
          || "$t" -w -I "$c" 1 -i "$BR_PREFIX+" -m comment --comment "$FW_COMMENT" -j DROP || ok=1
      elif [ "$1" = -D ]; then
        while "$t" -w -D "$c" -i "$BR_PREFIX+" -m comment --comment "$FW_COMMENT" -j DROP 2>/dev/null; do :; done
      else
        "$t" -w -C "$c" -i "$BR_PREFIX+" -m comment --comment "$FW_COMMENT" -j DROP 2>/dev/null || ok=1
      fi
    done
  done
  return $ok
}
firewall_up() {
  modprobe br_netfilter 2>/dev/null || true
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] \
    || die "br_netfilter is not loaded (modprobe br_netfilter): without it pods on one bridge reach each other"
  sysctl -qw net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1
  firewall_rules -I || die "could not add the node firewall's iptables rules"
}

cmd_up() {
  [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kubelet" ] && [ -x "$BIN/containerd" ] && [ -x "$BIN/runsc" ] && [ -x "$BIN/etcd" ] \
    || die "binaries missing in $BIN: run scripts/kube/build.sh first"
  [ "$(id -u)" = 0 ] || die "must run as root (containerd, kubelet, cgroups, mounts)"
  [ -x "$RUNC" ] || die "runc not found (apt-get install runc, or set RUNC)"
  local names; read -r -a names <<< "$(node_names)"
  [ "$NODES" -ge 1 ] 2>/dev/null || die "--nodes must be a positive number"
  [ "$NODES" -le ${#names[@]} ] || die "$NODES nodes need $NODES names resolving to 127.0.0.1; /etc/hosts has ${#names[@]} (${names[*]})"
  names=("${names[@]:0:$NODES}")

  if [ -f "$STATE/cluster.env" ] && alive "$PIDS/kube-apiserver"; then
    local cur; cur=$(sed -n 's/^NODES=//p' "$STATE/cluster.env")
    if [ "$cur" = "${names[*]}" ] && cmd_status >/dev/null 2>&1; then
      log "already up (${names[*]}); $(cmd_env)"; return 0
    fi
    log "a different or unhealthy cluster is running in $STATE: taking it down first"
  fi
  cmd_down quiet
  local port; for port in 2379 2380 6443 10257 10259; do
    ! ss -Hltn "sport = :$port" | grep -q . || die "port $port on 127.0.0.1 is in use (another cluster?)"
  done

  local t0; t0=$(date +%s)
  mkdir -p "$STATE" "$LOGS" "$PIDS" "$KCFG"
  {
    echo "NODES=${names[*]}"
    echo "BIN=$BIN"
    echo "IMAGES=${IMAGES[*]}"
    [ -d /var/log/containers ] && echo "VAR_LOG_CONTAINERS_EXISTED=1" || echo "VAR_LOG_CONTAINERS_EXISTED=0"
    [ -d /var/lib/cni ] && echo "VAR_LIB_CNI_EXISTED=1" || echo "VAR_LIB_CNI_EXISTED=0"
    [ -d /var/lib/kubelet ] && echo "VAR_LIB_KUBELET_EXISTED=1" || echo "VAR_LIB_KUBELET_EXISTED=0"
  } > "$STATE/cluster.env"
  modprobe br_netfilter 2>/dev/null || true
  local s; for s in "${SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done > "$STATE/sysctl-before.txt"

  log "certificates and kubeconfigs"
  gen_pki "${names[@]}"
  kubeconfig admin kubernetes-admin admin
  kubeconfig controller-manager system:kube-controller-manager controller-manager
  kubeconfig scheduler system:kube-scheduler scheduler
  local nm; for nm in "${names[@]}"; do kubeconfig "kubelet-$nm" "system:node:$nm" "kubelet-$nm"; done

  save_images
  firewall_up
  start_control_plane

  local i n pids=()
  for i in $(seq 1 "$NODES"); do
    n=$STATE/nodes/n$i; mkdir -p "$n"
    containerd_config "$i" "$n"
    make_cgroup_root "$CG_PREFIX-n$i"
    log "containerd n$i"
    # containerd finds containerd-shim-runsc-v1 and containerd-shim-runc-v2 on PATH
    start "containerd-n$i" "$LOGS/containerd-n$i.log" env PATH="$BIN:$PATH" "$BIN/containerd" --config "$n/containerd/config.toml"
    wait_for 100 0.2 test -S "$n/containerd.sock" || fail "containerd n$i start" "$LOGS/containerd-n$i.log"
    log "importing images into n$i (log: $LOGS/import-n$i.log)"
    import_images "$i" "$n" & pids+=($!)
  done
  for i in $(seq 1 "$NODES"); do
    wait "${pids[$((i - 1))]}" || fail "image import into node n$i" "$LOGS/import-n$i.log"
  done
  for i in $(seq 1 "$NODES"); do
    n=$STATE/nodes/n$i; nm=${names[$((i - 1))]}
    kubelet_config "$i" "$n"
    log "kubelet $nm"
    start "kubelet-n$i" "$LOGS/kubelet-n$i.log" "$BIN/kubelet" --config="$n/kubelet-config.yaml" \
      --kubeconfig="$KCFG/kubelet-$nm.kubeconfig" --root-dir="$n/kubelet" --cert-dir="$n/kubelet/pki" \
      --hostname-override="$nm" --v=1
  done
  for i in $(seq 1 "$NODES"); do
    nm=${names[$((i - 1))]}
    wait_for 240 0.5 kubectl get node "$nm" || fail "node $nm registration (waited 120 s)" "$LOGS/kubelet-n$i.log"
    kubectl wait --for=condition=Ready "node/$nm" --timeout=120s >/dev/null || fail "node $nm Ready" "$LOGS/kubelet-n$i.log"
  done
  kubectl apply -f - >/dev/null <<YAML || fail "RuntimeClass gvisor"
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gvisor
handler: runsc
YAML
  log "up in $(($(date +%s) - t0)) s: nodes ${names[*]}, RuntimeClass gvisor, images ${IMAGES[*]}"
  echo "KUBECONFIG=$ADMIN_KUBECONFIG"
}

# Every process that belongs to this cluster: the recorded PIDs, the shims each containerd started
# (shim.pid in its task dirs), anything in the nodes' cgroups, and anything whose command line names the state dir.
our_pids() {
  local f p
  for f in "$PIDS"/*; do [ -f "$f" ] && cat "$f"; done
  find "$STATE/nodes" -name shim.pid 2>/dev/null | while read -r f; do cat "$f"; echo; done
  cgroup_dirs | while read -r d; do find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null; done
  # (only programs from the cluster's bin dir: a shell or an editor that names the dir is left alone)
  for p in /proc/[0-9]*; do
    case "$(readlink "$p/exe" 2>/dev/null)" in "$BIN"/*) ;; *) continue ;; esac
    if tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -qF "$STATE/"; then echo "${p#/proc/}"; fi
  done
  return 0
}
live_pids() { our_pids | grep -E '^[0-9]+$' | sort -un | while read -r p; do [ "$p" != $$ ] && kill -0 "$p" 2>/dev/null && echo "$p"; done; return 0; }

stop_pidfile() { # NAME [TIMEOUT_TENTHS]
  local f=$PIDS/$1 p i
  [ -f "$f" ] || return 0
  p=$(cat "$f")
  if kill -0 "$p" 2>/dev/null; then
    kill "$p" 2>/dev/null || true
    for ((i = 0; i < ${2:-100}; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  fi
  rm -f "$f"
}

cmd_down() {
  local quiet=${1:-} t0; t0=$(date +%s)
  [ -d "$STATE" ] || { [ -n "$quiet" ] || log "nothing to take down in $STATE"; return 0; }
  [ -n "$quiet" ] || log "taking down the cluster in $STATE"
  # 1. pods first, so the kubelets stop their sandboxes cleanly
  if alive "$PIDS/kube-apiserver" && [ -f "$ADMIN_KUBECONFIG" ]; then
    timeout 60 "$BIN/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" delete pods --all -A --grace-period=0 --force >/dev/null 2>&1 || true
    for i in $(seq 40); do
      [ -z "$(ls "$STATE"/nodes/*/containerd/state/io.containerd.runtime.v2.task/k8s.io/ 2>/dev/null)" ] && break; sleep 0.5
    done
  fi
  # 2. kubelets, then the containerd instances (and their shims), then the control plane, apiserver before etcd
  local f name
  for f in "$PIDS"/kubelet-*; do [ -f "$f" ] && stop_pidfile "$(basename "$f")"; done
  local shims; shims=$({ find "$STATE/nodes" -name shim.pid 2>/dev/null || true; } | while read -r f; do cat "$f"; echo; done)
  for f in "$PIDS"/containerd-*; do [ -f "$f" ] && stop_pidfile "$(basename "$f")"; done
  for p in $shims; do kill "$p" 2>/dev/null || true; done
  for name in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop_pidfile "$name"; done
  # 3. whatever is left that is provably ours (sandboxes, gofers, pause processes)
  local left i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    left=$(live_pids)
    [ -z "$left" ] && break
    # shellcheck disable=SC2086
    kill -9 $left 2>/dev/null || true; sleep 0.3
  done
  # 4. mounts under the state dir, deepest first
  local m
  for i in 1 2 3; do
    awk -v s="$STATE/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
  done
  # 5. the nodes' bridges (their veths went with the pods' network namespaces)
  local br
  for br in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{ print $2 }' | grep "^$BR_PREFIX" || true); do
    ip link del "$br" 2>/dev/null || true
  done
  # 5b. the node firewall
  firewall_rules -D
  # 6. the nodes' cgroups, deepest first
  cgroup_dirs | while read -r d; do find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true; done
  # 7. the kubelets' links in /var/log/containers (its path is fixed) into our dir
  local l
  for l in /var/log/containers/*.log; do
    [ -L "$l" ] && case "$(readlink "$l")" in "$STATE"/*) rm -f "$l" ;; esac
  done
  if [ -f "$STATE/cluster.env" ] && grep -q '^VAR_LOG_CONTAINERS_EXISTED=0' "$STATE/cluster.env"; then
    rmdir /var/log/containers 2>/dev/null || true
  fi
  # 7b. containerd's CNI result cache (libcni keeps it in /var/lib/cni, whatever the config says)
  rm -f /var/lib/cni/results/drydock-test-* 2>/dev/null || true
  if [ -f "$STATE/cluster.env" ] && grep -q '^VAR_LIB_CNI_EXISTED=0' "$STATE/cluster.env"; then
    find /var/lib/cni -depth -type d -empty -delete 2>/dev/null || true
  fi
  # 7c. the device-plugin socket every kubelet puts at a fixed path, /var/lib/kubelet/device-plugins
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock 2>/dev/null || true
  if [ -f "$STATE/cluster.env" ] && grep -q '^VAR_LIB_KUBELET_EXISTED=0' "$STATE/cluster.env"; then
    find /var/lib/kubelet -depth -type d -empty -delete 2>/dev/null || true
  fi
  # 8. the sysctls a kubelet changed
  if [ -f "$STATE/sysctl-before.txt" ]; then
    local k v
    while IFS='=' read -r k v; do [ -n "$k" ] && sysctl -qw "$k=$v" 2>/dev/null || true; done < "$STATE/sysctl-before.txt"
    rm -f "$STATE/sysctl-before.txt"
  fi
  # 9. the state, except the certificates (kept so a client's CA stays valid across restarts) and logs
  rm -rf "$STATE/nodes" "$STATE/etcd" "$PIDS" "$STATE/cluster.env"
  [ -n "$quiet" ] && return 0
  if [ -n "$PURGE" ]; then rm -rf "$STATE"; rmdir "$(dirname "$STATE")" 2>/dev/null || true; fi
  local report; report=$(leftovers)
  if [ -n "$report" ]; then
    echo "$report" >&2; die "down left things behind (listed above)"
  fi
  log "down in $(($(date +%s) - t0)) s: no processes, mounts, bridges or cgroups left"
}

leftovers() { # prints whatever of ours is still on the host
  local p m b c
  p=$(live_pids | tr '\n' ' ')
  m=$(awk -v s="$STATE/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo | tr '\n' ' ')
  b=$(ip -o link show type bridge 2>/dev/null | awk -F': ' '{ print $2 }' | grep "^$BR_PREFIX" | tr '\n' ' ' || true)
  c=$(cgroup_dirs | tr '\n' ' ')
  local f=""; for t in iptables ip6tables; do "$t" -w -S 2>/dev/null | grep -q -- "$FW_COMMENT" && f="$f $t"; done
  [ -z "$p" ] || echo "processes: $p"
  [ -z "$m" ] || echo "mounts: $m"
  [ -z "$b" ] || echo "bridges: $b"
  [ -z "$c" ] || echo "cgroups: $c"
  [ -z "$f" ] || echo "firewall rules in:$f"
  return 0
}

cmd_status() {
  [ -f "$STATE/cluster.env" ] || { echo "down (no cluster in $STATE)"; leftovers; return 1; }
  local ok=0 f
  for f in "$PIDS"/*; do
    [ -f "$f" ] || continue
    if alive "$f"; then echo "$(basename "$f"): running (pid $(cat "$f"))"; else echo "$(basename "$f"): NOT RUNNING"; ok=1; fi
  done
  if kubectl get --raw /readyz >/dev/null 2>&1; then
    echo "apiserver: ready at $APISERVER"
    kubectl get nodes -o wide --no-headers 2>/dev/null | awk '{ print "node " $1 ": " $2 }'
    kubectl get nodes --no-headers 2>/dev/null | awk '$2 != "Ready" { bad = 1 } END { exit bad }' || ok=1
  else
    echo "apiserver: NOT READY"; ok=1
  fi
  if firewall_rules -C; then echo "firewall: pods' packets into the bridges dropped"; else echo "firewall: MISSING"; ok=1; fi
  echo "KUBECONFIG=$ADMIN_KUBECONFIG"
  return $ok
}

# `export` so that eval "$(cluster.sh env)" reaches the programs the shell starts, not just the shell.
cmd_env() { echo "export KUBECONFIG=$ADMIN_KUBECONFIG"; }

# Puts images from the local Docker engine onto every node of a running cluster, then waits until each
# node's status lists them (what a backend's hasImage reads; the kubelet reports every 10 s).
cmd_load() {
  [ -f "$STATE/cluster.env" ] && alive "$PIDS/kube-apiserver" || die "no cluster is up in $STATE: run up first"
  [ ${#ARGS[@]} -gt 0 ] || die "load needs one or more images: load IMAGE..."
  local n i=0 pids=() img want=() nodes
  nodes=$(ls -d "$STATE"/nodes/n* | wc -l)
  # Only what some node lacks: an import of the same image again takes as long as the first.
  for img in "${ARGS[@]}"; do
    case $img in */*) n=$img ;; *) n=docker.io/library/$img ;; esac
    [ "$(kubectl get nodes -o json | grep -c "\"$n\"")" -ge "$nodes" ] || want+=("$img")
  done
  [ ${#want[@]} -gt 0 ] || { log "every node has ${ARGS[*]}"; return 0; }
  IMAGES=("${want[@]}")
  save_images
  SAVED=("${SAVED[@]:1}")
  for n in "$STATE"/nodes/n*; do
    i=${n##*/n}
    log "importing ${IMAGES[*]} into n$i"
    import_images "$i" "$n" & pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || fail "image import" "$LOGS/import-n1.log"; done
  for img in "${IMAGES[@]}"; do
    case $img in */*) ;; *) img=docker.io/library/$img ;; esac
    wait_for 120 0.5 bash -c '[ "$("$0" --kubeconfig "$1" get nodes -o json | grep -c "\"$2\"")" -ge "$3" ]' \
      "$BIN/kubectl" "$ADMIN_KUBECONFIG" "$img" "${#pids[@]}" || die "the nodes did not report $img within 60 s"
  done
  log "loaded ${IMAGES[*]} onto ${#pids[@]} node(s)"
}

case $CMD in
  up) cmd_up ;;
  load) cmd_load ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  kubectl) kubectl "${ARGS[@]}" ;;
  *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac

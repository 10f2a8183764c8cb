#!/usr/bin/env bash
# Builds everything a local test cluster needs, from source, into a cache outside the repository:
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl, containerd (+ runc shim, ctr),
#   gVisor runsc + containerd-shim-runsc-v1, the CNI plugins bridge/host-local/loopback, and a pause image.
# Each component is skipped when its binaries are present and its stamp records the same version and inputs,
# so a second run takes seconds. Go builds run at the lowest CPU priority with -p 2.
#
# usage: scripts/kube/build.sh [COMPONENT...]      (default: all; components: cni pause containerd gvisor etcd kubernetes)
# env:   DRYDOCK_KUBE_CACHE  cache root (default /var/cache/drydock); binaries go to $DRYDOCK_KUBE_CACHE/kubernetes/v1.37.2,
#        the Go module and build caches to $DRYDOCK_KUBE_CACHE/go.
set -euo pipefail

K8S_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.7.3
CONTAINERD_VERSION=v2.4.2
CNI_VERSION=v1.9.1
# gVisor's go-buildable "go" branch, as a pseudo-version the Go proxy serves
GVISOR_VERSION=v0.0.0-20260905035102-160fafc42237

CACHE_ROOT=${DRYDOCK_KUBE_CACHE:-/var/cache/drydock}
OUT=$CACHE_ROOT/kubernetes/$K8S_VERSION
SRC=$OUT/src
STAMPS=$OUT/stamps
LOGS=$OUT/build-logs
export GOPATH=$CACHE_ROOT/go
export GOMODCACHE=$GOPATH/mod
export GOCACHE=$GOPATH/build
export GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
NICE=(nice -n 19)

die() { echo "build: $*" >&2; exit 1; }
log() { echo "[$(date -u +%T)] $*"; }

command -v go >/dev/null || die "go is not installed (Go >= 1.25 is needed)"
command -v gcc >/dev/null || die "gcc is not installed (needed for kubelet and the pause binary)"
mkdir -p "$OUT/bin" "$OUT/cni/bin" "$OUT/images" "$SRC" "$STAMPS" "$LOGS" "$GOPATH"

# stamp NAME: the version and inputs a component was built from; a component is rebuilt when they change.
stamp_ok() { # NAME INPUTS FILE...
  local name=$1 inputs=$2; shift 2
  [ -f "$STAMPS/$name" ] && [ "$(cat "$STAMPS/$name")" = "$inputs" ] || return 1
  local f; for f in "$@"; do [ -s "$f" ] || return 1; done
}
stamp_write() { printf '%s' "$2" > "$STAMPS/$1"; }

# run STEP LOGFILE CMD...: runs CMD (niced), its output into LOGFILE; on failure, says which step and shows the end of the log.
run() {
  local step=$1 logf=$2; shift 2
  if ! "$@" >>"$logf" 2>&1; then
    echo "build: step '$step' failed; last lines of $logf:" >&2
    tail -n 25 "$logf" >&2
    exit 1
  fi
}
timed() { # NAME CMD...: records wall time of a component's build in $LOGS/times
  local name=$1 t0 t1; shift; t0=$(date +%s)
  "$@"; t1=$(date +%s)
  echo "$name $((t1 - t0))s $(date -u +%FT%TZ)" >> "$LOGS/times"
  log "$name built in $((t1 - t0)) s"
}
wrapper_module() { # DIR: an empty module to `go get` a dependency into and build it from there
  mkdir -p "$1"; [ -f "$1/go.mod" ] || printf 'module local/build\n\ngo 1.25\n' > "$1/go.mod"
}

build_cni() {
  local d=$SRC/cni l=$LOGS/cni.log; : > "$l"; wrapper_module "$d"; cd "$d"
  run "cni: go get" "$l" go get "github.com/containernetworking/plugins@$CNI_VERSION"
  run "cni: go build" "$l" env CGO_ENABLED=0 "${NICE[@]}" go build -p 2 -trimpath -ldflags "-s -w" -o "$OUT/cni/bin/" \
    github.com/containernetworking/plugins/plugins/main/loopback \
    github.com/containernetworking/plugins/plugins/main/bridge \
    github.com/containernetworking/plugins/plugins/ipam/host-local
}

build_containerd() {
  local d=$SRC/containerd l=$LOGS/containerd.log; : > "$l"; wrapper_module "$d"; cd "$d"
  run "containerd: go get" "$l" go get "github.com/containerd/containerd/v2@$CONTAINERD_VERSION"
  run "containerd: go build" "$l" env CGO_ENABLED=0 "${NICE[@]}" go build -p 2 -trimpath -tags no_btrfs,no_devmapper,no_zfs \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" -o "$OUT/bin/" \
    github.com/containerd/containerd/v2/cmd/containerd \
    github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    github.com/containerd/containerd/v2/cmd/ctr
}

# The gVisor shim sets its own oom_score_adj to -999 and aborts when it cannot (no CAP_SYS_RESOURCE in many
# containers and VMs): this one-line patch makes that best effort.
GVISOR_PATCH='shim: SetOOMScore best effort'
build_gvisor() {
  local d=$SRC/gvisor l=$LOGS/gvisor.log; : > "$l"; wrapper_module "$d"; cd "$d"
  go mod edit -dropreplace gvisor.dev/gvisor
  run "gvisor: go get" "$l" go get "gvisor.dev/gvisor@$GVISOR_VERSION"
  local g; g=$(go list -m -f '{{.Dir}}' gvisor.dev/gvisor) || die "gvisor: module not found after go get (see $l)"
  rm -rf gvisor-src; cp -r "$g" gvisor-src; chmod -R u+w gvisor-src
  python3 - <<'PY' || die "gvisor: the shim patch no longer applies (pkg/shim/v1/manager.go changed)"
p = 'gvisor-src/pkg/shim/v1/manager.go'
s = open(p).read()
old = '''	if err := sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil {
		return shim.BootstrapParams{}, fmt.Errorf("failed to set OOM Score on shim: %w", err)
	}'''
assert old in s
open(p, 'w').write(s.replace(old, '	_ = sys.SetOOMScore(cmd.Process.Pid, oomScoreMax) // needs CAP_SYS_RESOURCE'))
PY
  go mod edit -replace gvisor.dev/gvisor=./gvisor-src
  run "gvisor: go build runsc" "$l" env CGO_ENABLED=0 "${NICE[@]}" go build -p 2 -trimpath -ldflags "-s -w" -o "$OUT/bin/runsc" gvisor.dev/gvisor/runsc
  run "gvisor: go build shim" "$l" env CGO_ENABLED=0 "${NICE[@]}" go build -p 2 -trimpath -ldflags "-s -w" -o "$OUT/bin/containerd-shim-runsc-v1" gvisor.dev/gvisor/shim
}

build_etcd() {
  # server/v3's go.mod has replace directives, so `go install ...@version` refuses: build through a wrapper module.
  local d=$SRC/etcd l=$LOGS/etcd.log; : > "$l"; wrapper_module "$d"; cd "$d"
  run "etcd: go get" "$l" go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  run "etcd: go build" "$l" "${NICE[@]}" go build -p 2 -trimpath -ldflags "-s -w" -o "$OUT/bin/etcd" go.etcd.io/etcd/server/v3
}

# The k8s.io/kubernetes module source, with the staging replaces (./staging/src/k8s.io/X, absent from the
# module zip) pointed at the published k8s.io/X $STAGING_VERSION modules.
k8s_source() {
  local d=$SRC/kubernetes-$K8S_VERSION l=$LOGS/kubernetes-source.log
  [ -f "$d/.ready" ] && return 0
  : > "$l"
  run "kubernetes: download k8s.io/kubernetes@$K8S_VERSION" "$l" go mod download "k8s.io/kubernetes@$K8S_VERSION"
  rm -rf "$d"; cp -r "$GOMODCACHE/k8s.io/kubernetes@$K8S_VERSION" "$d"; chmod -R u+w "$d"
  cd "$d"
  local m
  for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/src/k8s.io/.*#\1#p' go.mod); do
    go mod edit -replace "$m=$m@$STAGING_VERSION"
  done
  grep -q '=> ./staging' go.mod && die "kubernetes: staging replaces left in $d/go.mod"
  touch "$d/.ready"
}

K8S_BINS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
k8s_ldflags() {
  local v=$K8S_VERSION x=k8s.io/component-base/version c=k8s.io/client-go/pkg/version
  local major=${v#v}; major=${major%%.*}; local minor=${v#v*.}; minor=${minor%%.*}
  echo "-s -w -X $x.gitVersion=$v -X $x.gitMajor=$major -X $x.gitMinor=$minor -X $x.gitTreeState=clean -X $x.buildDate=1970-01-01T00:00:00Z" \
    "-X $c.gitVersion=$v -X $c.gitMajor=$major -X $c.gitMinor=$minor -X $c.gitTreeState=clean -X $c.buildDate=1970-01-01T00:00:00Z"
}
build_kubernetes() { # BIN...: one go build for all of them, so the packages they share compile once
  local l=$LOGS/kubernetes.log pkgs=() b; : > "$l"
  k8s_source; cd "$SRC/kubernetes-$K8S_VERSION"
  for b in "$@"; do pkgs+=("./cmd/$b"); done
  run "kubernetes: go build $*" "$l" "${NICE[@]}" go build -p 2 -trimpath -ldflags "$(k8s_ldflags)" -o "$OUT/bin/" "${pkgs[@]}"
}

# The pause binary from the Kubernetes source, packed as a one-layer image tar (docker-archive layout) that
# `ctr images import` reads; no Docker build needed.
build_pause() {
  local l=$LOGS/pause.log d=$SRC/pause; : > "$l"
  k8s_source; rm -rf "$d"; mkdir -p "$d/rootfs" "$d/image"
  run "pause: gcc" "$l" gcc -Os -static -DVERSION="$K8S_VERSION" -o "$d/rootfs/pause" "$SRC/kubernetes-$K8S_VERSION/build/pause/linux/pause.c"
  strip "$d/rootfs/pause"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$d/rootfs" -cf "$d/layer.tar" pause
  local diff; diff=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
  mkdir -p "$d/image/$diff"; mv "$d/layer.tar" "$d/image/$diff/layer.tar"
  printf '{"architecture":"amd64","os":"linux","config":{"User":"65535:65535","Entrypoint":["/pause"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created_by":"drydock scripts/kube/build.sh"}]}' "$diff" > "$d/config.json"
  local cfg; cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1); mv "$d/config.json" "$d/image/$cfg.json"
  printf '[{"Config":"%s.json","RepoTags":["localhost/pause:%s"],"Layers":["%s/layer.tar"]}]' "$cfg" "$K8S_VERSION" "$diff" > "$d/image/manifest.json"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$d/image" -cf "$OUT/images/pause.tar" .
}

component() { # NAME: builds it unless its stamp says it is current
  local name=$1 inputs files=()
  case $name in
    cni) inputs="cni $CNI_VERSION bridge host-local loopback"; files=("$OUT/cni/bin/"{bridge,host-local,loopback}) ;;
    pause) inputs="pause $K8S_VERSION build/pause/linux/pause.c docker-archive"; files=("$OUT/images/pause.tar") ;;
    containerd) inputs="containerd $CONTAINERD_VERSION"; files=("$OUT/bin/"{containerd,containerd-shim-runc-v2,ctr}) ;;
    gvisor) inputs="gvisor $GVISOR_VERSION patch:$GVISOR_PATCH"; files=("$OUT/bin/"{runsc,containerd-shim-runsc-v1}) ;;
    etcd) inputs="etcd $ETCD_VERSION"; files=("$OUT/bin/etcd") ;;
    kubernetes)
      local b missing=()
      inputs="kubernetes $K8S_VERSION staging $STAGING_VERSION ldflags $(k8s_ldflags)"
      for b in "${K8S_BINS[@]}"; do stamp_ok "$b" "$inputs" "$OUT/bin/$b" || missing+=("$b"); done
      if [ ${#missing[@]} -eq 0 ]; then log "kubernetes: up to date"; return 0; fi
      log "kubernetes: building ${missing[*]} (log: $LOGS/kubernetes.log)"
      timed "kubernetes(${missing[*]})" build_kubernetes "${missing[@]}"
      for b in "${missing[@]}"; do stamp_write "$b" "$inputs"; done
      return 0 ;;
    *) die "unknown component '$name' (known: cni pause containerd gvisor etcd kubernetes)" ;;
  esac
  if stamp_ok "$name" "$inputs" "${files[@]}"; then log "$name: up to date"; return 0; fi
  log "$name: building (log: $LOGS/$name.log)"
  timed "$name" "build_$name"
  stamp_write "$name" "$inputs"
}

# Small components first: containerd and gVisor can be tried while Kubernetes compiles.
COMPONENTS=("$@"); [ ${#COMPONENTS[@]} -gt 0 ] || COMPONENTS=(cni pause containerd gvisor etcd kubernetes)
for c in "${COMPONENTS[@]}"; do component "$c"; done
log "done: binaries in $OUT/bin, CNI plugins in $OUT/cni/bin, images in $OUT/images"

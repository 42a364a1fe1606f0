#!/usr/bin/env bash
# Install the Debian packages the integration tests use: shells (dash, zsh, tcsh, fish), Lmod,
# libseccomp (CMA made to fail for real), Slurm + munge (tests/slurm starts a real 3-node Slurm), and
# Environment Modules; chromium (headless: the report's browser test) and fonts-dejavu-core (the
# report's figures use DejaVu Sans); tmux (advisor show --plot read from a real terminal's screen);
# ruby, nodejs and default-jdk-headless (tests/emit/test_refused_consumers.py: RUBYOPT,
# NODE_OPTIONS and JAVA_TOOL_OPTIONS run by the real runtimes);
# gcc, make, libc6-dev and libblas-dev (tests/apps/hpcc.py builds HPCC with the mpich wheel's mpicc
# against Debian's reference BLAS, whose libblas.so carries the CBLAS symbols).
# HPCC's source is Debian's `hpcc` source package, fetched by the tests with `apt-get source`
# (no root needed then): when no deb-src entry exists, one is added next to the binary entries
# (/etc/apt/sources.list.d/hpc-advisor-deb-src.sources or .list) and the lists updated.
# Debian's lmod and environment-modules packages conflict (both provide `module`), so Lmod is
# installed and Environment Modules is unpacked (dpkg -x) into /opt/environment-modules, whose
# modulecmd.tcl the tests run with tclsh.
# Idempotent; does nothing (with a note on stderr) without root or apt-get.
set -u
pkgs="dash zsh tcsh fish lmod tcl ruby nodejs default-jdk-headless libseccomp2 python3-seccomp util-linux procps strace slurmctld slurmd slurm-client munge chromium fonts-dejavu-core tmux gcc make libc6-dev libblas-dev"
envmod=/opt/environment-modules
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
need_envmod=0
[ -f "$envmod/usr/lib/x86_64-linux-gnu/modulecmd.tcl" ] || [ -f "$envmod/usr/lib/modulecmd.tcl" ] || need_envmod=1
need_src=0
apt-cache showsrc hpcc 2>/dev/null | grep -q '^Package: hpcc' || need_src=1
[ -z "$missing" ] && [ "$need_envmod" = 0 ] && [ "$need_src" = 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  needed="$missing"
  [ "$need_envmod" = 1 ] && needed="$needed environment-modules"
  [ "$need_src" = 1 ] && needed="$needed hpcc-source(deb-src)"
  echo "system-deps: not root or no apt-get; tests needing:$needed will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if [ "$need_src" = 1 ] && ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  # the same archives as the binary entries, as source entries (deb822 or one-line format)
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      > /etc/apt/sources.list.d/hpc-advisor-deb-src.sources
  elif [ -f /etc/apt/sources.list ]; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > /etc/apt/sources.list.d/hpc-advisor-deb-src.list
  fi
  echo "system-deps: added a deb-src entry (HPCC's source package)" >&2
fi
apt-get update -qq >/dev/null || true
if [ -n "$missing" ]; then
  echo "system-deps: installing$missing" >&2
  apt-get install -y -qq --no-install-recommends $missing >/dev/null || echo "system-deps: apt-get install failed" >&2
fi
if [ "$need_envmod" = 1 ]; then
  tmp=$(mktemp -d)
  if (cd "$tmp" && apt-get download -qq environment-modules >/dev/null 2>&1); then
    mkdir -p "$envmod" && dpkg -x "$tmp"/environment-modules_*.deb "$envmod"
    echo "system-deps: environment-modules unpacked into $envmod" >&2
  else
    echo "system-deps: could not download environment-modules" >&2
  fi
  rm -rf "$tmp"
fi
exit 0

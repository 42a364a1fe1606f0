#!/usr/bin/env bash
# Install the Debian packages the integration tests use: shells (dash, zsh, tcsh, fish), Lmod,
# libseccomp (CMA made to fail for real), Slurm + munge (tests/slurm starts a real 3-node Slurm), and
# Environment Modules; chromium (headless: the report's browser test) and fonts-dejavu-core (the
# report's figures use DejaVu Sans); tmux (advisor show --plot read from a real terminal's screen).
# Debian's lmod and environment-modules packages conflict (both provide `module`), so Lmod is
# installed and Environment Modules is unpacked (dpkg -x) into /opt/environment-modules, whose
# modulecmd.tcl the tests run with tclsh.
# Idempotent; does nothing (with a note on stderr) without root or apt-get.
set -u
pkgs="dash zsh tcsh fish lmod tcl libseccomp2 python3-seccomp util-linux procps slurmctld slurmd slurm-client munge chromium fonts-dejavu-core tmux"
envmod=/opt/environment-modules
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
need_envmod=0
[ -f "$envmod/usr/lib/x86_64-linux-gnu/modulecmd.tcl" ] || [ -f "$envmod/usr/lib/modulecmd.tcl" ] || need_envmod=1
[ -z "$missing" ] && [ "$need_envmod" = 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: not root or no apt-get; tests needing:$missing environment-modules will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
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

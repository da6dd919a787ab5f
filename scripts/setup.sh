#!/bin/sh
# Installs, from Debian packages only, whatever clustersim needs and this machine lacks.
# Idempotent: when everything is present it only runs one dpkg-query and exits.
set -eu

PACKAGES="g++ cmake ninja-build pkg-config \
libsimgrid-dev libboost-graph-dev libyaml-cpp-dev doctest-dev \
libcli11-dev nlohmann-json3-dev \
gnuplot-nox graphviz \
clang libclang-rt-14-dev clang-tidy protobuf-compiler \
slurm-wlm munge"

missing=""
for p in $PACKAGES; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  case "$status" in
    ii*) ;;
    *) missing="$missing $p" ;;
  esac
done

if [ -z "$missing" ]; then
  exit 0
fi

echo "setup: installing:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh image has no package lists; refresh them only when an install cannot proceed without.
if ! $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends $missing
fi

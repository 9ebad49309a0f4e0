#!/usr/bin/env bash
# System packages the test suite exercises for real: sshd and iperf3 in network
# namespaces (cluster tests), a Slurm controller and node daemon with munge (slurm
# transport), Debian's Chromium (HTML report rendering), and jq with OpenSSL (the documented
# verification of a DSSE envelope without spec-check). Debian/Ubuntu, as root or
# with sudo. Tests that need a missing one skip and say why.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  iproute2 iputils-ping openssh-server openssh-client iperf3 \
  jq openssl \
  slurm-wlm munge \
  chromium \
  >/dev/null
echo "system packages installed"

#!/bin/sh
# Installs what the SSH tests need (run as root, e.g. in CI): the OpenSSH client (the `ssh -G` oracle,
# ssh-keygen, ssh-keyscan), the OpenSSH server (the private sshd of the e2e tests), dash and busybox
# (the login shells of the test users), iproute2 (`ip netns` for the partition test). The test users themselves
# are created by test/helpers/sshd.ts.
set -eu
if [ "$(id -u)" -ne 0 ]; then
  echo "sshd-setup.sh: run as root (the e2e tests start sshd and create test users)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends openssh-client openssh-server dash busybox iproute2
# sshd refuses to start without its privilege-separation directory.
mkdir -p /run/sshd
echo "sshd-setup.sh: ready; run the tests as root with AWAITLESS_REQUIRE_ALL=1 to forbid skips"

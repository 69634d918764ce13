#!/usr/bin/env bash
# tokentrace-capture on a lossy link: a network namespace of its own whose
# loopback drops 4 % of TCP packets on input (nftables), so TCP resends and
# the kernel queues packets out of order.  Inside it, e2e_capture's
# test_arrival_under_loss checks that no chunk is recorded before the
# simulator emitted it and that requests which saw out-of-order packets
# fell back from kernel stamps to the time the capture looked.
# Needs root (CAP_NET_ADMIN), ip and nft; exits 77 (skipped) without them.
# usage: loss.sh E2E_CAPTURE SIM CAPTURE PROFILE WORKDIR
set -euo pipefail
E2E=$1 SIM=$2 CAP=$3 PROFILE=$4 W=$5
NS=tt-loss-$$
skip() { echo "SKIP: $*"; exit 77; }
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
command -v nft >/dev/null || skip "nft (nftables) is not installed"
ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace (not root?)"
trap 'ip netns del "$NS" 2>/dev/null || true' EXIT
ip netns exec "$NS" ip link set lo up
ip netns exec "$NS" nft add table inet tt ||
	skip "nftables does not work here"
ip netns exec "$NS" nft add chain inet tt in '{ type filter hook input priority 0; }'
ip netns exec "$NS" nft add rule inet tt in meta l4proto tcp numgen random mod 25 == 0 counter drop
rm -rf "$W"
mkdir -p "$W"
rc=0
TT_E2E_LOSSY=1 ip netns exec "$NS" "$E2E" "$SIM" "$CAP" "$PROFILE" "$W" test_arrival_under_loss || rc=$?
ip netns exec "$NS" nft list ruleset | grep -o 'counter packets [0-9]*' | sed 's/^/dropped: /'
exit $rc

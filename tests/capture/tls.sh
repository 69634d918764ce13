#!/usr/bin/env bash
# tokentrace-capture over TLS: the simulator behind a TLS-terminating
# socat on loopback, with a self-signed certificate made here.
#   1. without --cacert the certificate is refused: exit 1, a clear error
#   2. with --cacert the run completes; chunks are timed by the callback
#      (encrypted socket bytes cannot be counted against the body)
#   3. with --insecure the run completes and says so in its manifest
#   4. with a proxy set in the environment, plain http is timed by the
#      callback too (and without one, by the kernel)
# usage: tls.sh SIM CAPTURE TOKENTRACE WORKDIR
set -euo pipefail
SIM=$1 CAP=$2 TT=$3 W=$4
rm -rf "$W"
mkdir -p "$W"
cd "$W"
SIMPID= SOCAT=
cleanup() { [ -n "$SOCAT" ] && kill "$SOCAT" 2>/dev/null; [ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v socat >/dev/null || fail "socat is not installed (.ci/setup installs it)"

openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 \
	-subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null

"$SIM" --port 0 --max-runtime 60 > sim.out 2>sim.err &
SIMPID=$!
for _ in $(seq 100); do grep -q listening sim.out 2>/dev/null && break; sleep 0.05; done
SP=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' sim.out)
[ -n "$SP" ] || fail "the simulator did not start"

# a free port for socat: try random ones until it stays up and answers
PORT=
for _ in $(seq 20); do
	P=$((20000 + RANDOM % 40000))
	socat "OPENSSL-LISTEN:$P,bind=127.0.0.1,reuseaddr,fork,cert=cert.pem,key=key.pem,verify=0" \
		"TCP:127.0.0.1:$SP" 2>socat.err &
	SOCAT=$!
	for _ in $(seq 40); do
		if ! kill -0 "$SOCAT" 2>/dev/null; then break; fi
		if (exec 3<>"/dev/tcp/127.0.0.1/$P") 2>/dev/null; then PORT=$P; break; fi
		sleep 0.05
	done
	[ -n "$PORT" ] && break
	kill "$SOCAT" 2>/dev/null || true
	SOCAT=
done
[ -n "$PORT" ] || fail "socat could not listen"
URL="https://127.0.0.1:$PORT"
ARGS=(--contexts 1K --concurrency 4 --cells decode-1Kx4 --duration 1s --max-tokens 32
	--readiness 0.2s --readiness-timeout 5s -q)

# 1. an unknown certificate is refused, and the error says why and where
rc=0
"$CAP" "$URL" -o run1 "${ARGS[@]}" > out1 2> err1 || rc=$?
[ "$rc" = 1 ] || { cat err1; fail "untrusted certificate: exit $rc, want 1"; }
grep -q "127.0.0.1:$PORT" err1 || { cat err1; fail "the error does not name the server"; }
grep -qi "certificate" err1 || { cat err1; fail "the error does not name the certificate"; }

# 2. trusted through --cacert: a full run over TLS
"$CAP" "$URL" -o run2 --cacert cert.pem "${ARGS[@]}" 2> err2 || { cat err2; fail "capture with --cacert failed"; }
"$TT" report run2 --format csv > report2.csv || fail "report of the TLS run failed"
grep -q "decode" report2.csv || { cat report2.csv; fail "no decode row in the report"; }
grep -q '"kernel": 0,' run2/capture-info.json || { cat run2/capture-info.json; fail "TLS chunks timed from socket bytes"; }
grep -Eq '"callback": [1-9]' run2/capture-info.json || { cat run2/capture-info.json; fail "no chunk recorded over TLS"; }
if grep -q tls_insecure run2/manifest.json; then fail "a checked run marked insecure"; fi

# 3. --insecure: works, and the run says the certificate was not checked
"$CAP" "$URL" -o run3 --insecure "${ARGS[@]}" 2> err3 || { cat err3; fail "capture with --insecure failed"; }
grep -q tls_insecure run3/manifest.json || fail "an --insecure run does not say so"

# a --cacert that cannot be read is a usage error naming the file
rc=0
"$CAP" "$URL" -o run4 --cacert no-such.pem "${ARGS[@]}" 2> err4 || rc=$?
[ "$rc" = 2 ] && grep -q "no-such.pem" err4 || { cat err4; fail "bad --cacert: exit $rc"; }
# behind a proxy setting (bypassed here by no_proxy) the socket's bytes may
# not be the body's: chunks are timed by the callback, not by the kernel
http_proxy=http://127.0.0.1:9 no_proxy=127.0.0.1 \
	"$CAP" "http://127.0.0.1:$SP" -o run5 "${ARGS[@]}" 2> err5 || { cat err5; fail "capture with http_proxy set failed"; }
grep -q '"kernel": 0,' run5/capture-info.json || { cat run5/capture-info.json; fail "proxy: chunks timed from socket bytes"; }
"$CAP" "http://127.0.0.1:$SP" -o run6 "${ARGS[@]}" 2> err6 || { cat err6; fail "plain capture failed"; }
grep -Eq '"kernel": [1-9]' run6/capture-info.json || { cat run6/capture-info.json; fail "plain http: no kernel stamps"; }
echo "tls: ok"

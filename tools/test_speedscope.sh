#!/usr/bin/env bash
# A bwsim trace opened in speedscope (the offline trace viewer; npm package, tools/viewer) in
# headless Chromium: the app and the trace are served on a free loopback port, speedscope imports
# the trace from its URL, and the rendered page must name the trace, list every warp and unit track
# of the traced CTA and show no import error. Usage: test_speedscope.sh BWSIM_BINARY SPEEDSCOPE_DIST
set -euo pipefail
bwsim="$(realpath "${1:?usage: test_speedscope.sh BWSIM_BINARY SPEEDSCOPE_DIST}")"
dist="$(realpath "${2:?usage: test_speedscope.sh BWSIM_BINARY SPEEDSCOPE_DIST}")"
[ -f "$dist/index.html" ] || { echo "test_speedscope: no speedscope in $dist (tools/test.sh installs it)"; exit 1; }
work="$(mktemp -d)"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cp -r "$dist" "$work/app"
"$bwsim" run gemm --m 256 --n 256 --k 128 --trace "$work/app/gemm.trace.json" > /dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work/app" && exec timeout 120 python3 -m http.server "$port" --bind 127.0.0.1 > /dev/null 2>&1) &
server=$!
for _ in $(seq 50); do python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/index.html')" 2> /dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/gemm.trace.json"
timeout 90 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=15000 --dump-dom "$url" 2> /dev/null > "$work/dom.html"
text="$(sed -e 's/<[^>]*>/ /g' "$work/dom.html" | tr -s ' \n' ' ')"
fail() { echo "test_speedscope: $1"; echo "$text" | head -c 3000; echo; exit 1; }
grep -q "<title>gemm.trace.json - speedscope</title>" "$work/dom.html" || fail "the trace was not imported (no title)"
for name in "w0 TMA producer" "w1 MMA" "Epilogue rows 0-31" "TMA unit" "MMA pipe" "(1/10)"; do
  [[ "$text" == *"$name"* ]] || fail "the page does not list '$name'"
done
for bad in "Something went wrong" "rror" "Unrecognized format"; do
  [[ "$text" != *"$bad"* ]] || fail "the page shows '$bad'"
done
echo "test_speedscope: speedscope imported the GEMM trace: 10 tracks (6 warps, TMA unit, MMA pipe, CTA, tcgen05.ld/st path)"

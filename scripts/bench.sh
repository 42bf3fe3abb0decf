#!/usr/bin/env bash
# Runs every benchmark once. Each Link benchmark measures its baseline in
# the same run (bare bwrap, plain open, direct TCP, a direct call) and
# reports both beside the ratio: look for the "x-baseline" column. One
# package at a time (-p 1), so no benchmark shares the cores with another.
set -euo pipefail
cd "$(dirname "$0")/.."
export LNK_BIN="$PWD/bin"
# The sandboxes BenchmarkSandboxCompare sets beside Link's, installed
# where missing into a cache outside the repository (never by make test).
export LNK_BENCH_CACHE="${LNK_BENCH_CACHE:-/var/tmp/lnk-bench}"
if [ -z "${LNK_BENCH_NO_INSTALL:-}" ]; then
  if [ "$(id -u)" -eq 0 ] && ! command -v firejail >/dev/null; then apt-get install -y firejail >&2 || true; fi
  if [ "$(id -u)" -eq 0 ] && ! { command -v rg && command -v socat; } >/dev/null; then apt-get install -y ripgrep socat >&2 || true; fi # srt needs them
  if command -v npm >/dev/null && { ! [ -x "$LNK_BENCH_CACHE/npm/node_modules/.bin/srt" ] || ! [ -x "$LNK_BENCH_CACHE/npm/node_modules/.bin/codex" ]; }; then
    mkdir -p "$LNK_BENCH_CACHE/npm" && npm install --no-audit --no-fund --prefix "$LNK_BENCH_CACHE/npm" @openai/codex @anthropic-ai/sandbox-runtime >&2 || true
  fi
  # smokescreen beside the proxy (helpers/netbroker), built outside the repository.
  ss="$LNK_BENCH_CACHE/smokescreen-v0.1.0"
  if ! [ -x "$ss/smokescreen" ]; then
    (cd / && GOBIN="$ss" GOFLAGS=-mod=mod GOWORK=off go install github.com/stripe/smokescreen@v0.1.0 >&2) || echo "bench: smokescreen v0.1.0 could not be built" >&2
  fi
fi
# What the figures depend on beyond Link: the cores, and how long an idle
# vCPU polls before it halts (with none, each wake-up across cores costs
# tens of µs: docs/ARCHITECTURE.md).
echo "machine: $(nproc) cores, $(uname -r), bwrap $(bwrap --version 2>/dev/null | awk '{print $2}'), guest_halt_poll_ns=$(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo none)"
# Another build to run a tool call through beside this one, in turns in
# the same run (BenchmarkToolsCallFromAClientProcess's was-* columns):
# LNK_BENCH_BASE names a commit (b18e298 is the last whose lnk hosted the
# tool bridge in its own goroutines), built once into the cache.
if [ -n "${LNK_BENCH_BASE:-}" ]; then
  rev=$(git rev-parse --verify "$LNK_BENCH_BASE^{commit}")
  base="$LNK_BENCH_CACHE/base-$rev"
  if ! [ -x "$base/bin/lnk" ]; then
    rm -rf "$base" && mkdir -p "$base" && git archive "$rev" | tar -x -C "$base" && make -C "$base" build >&2
  fi
  export LNK_BENCH_BASE_BIN="$base/bin"
  echo "tool call compared with: $rev ($LNK_BENCH_BASE_BIN)"
fi
# figures keeps the lines a reader needs from go test's output.
figures() { grep -E '^(Benchmark|ok|FAIL|---|pkg:)|x-baseline|not measured|panic' || true; }
machine="$(nproc) cores, $(uname -r), bwrap $(bwrap --version 2>/dev/null | awk '{print $2}')"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
go test -p 1 -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-1s}" -count 1 -timeout 30m ./... 2>&1 | figures | tee "$results"
# The sandbox's start (issue #21: at most 2.3x bare bwrap with the same
# namespaces, measured in the same run), said on its own line and written
# to docs/PERFORMANCE.md.
start=$(awk '$1 ~ /^BenchmarkSandboxRunTrue-/ {
  for (i = 3; i < NF; i++) { if ($(i+1) == "link-ns/op") l = $i; if ($(i+1) == "base-ns/op") b = $i; if ($(i+1) == "x-baseline") r = $i }
  if (l != "") printf "lnk sandbox run -- true (no network): %.1f ms; bare bwrap, same namespaces: %.1f ms; ratio %.2fx (target: at most 2.3x, %s)\n", l/1e6, b/1e6, r, (r <= 2.3 ? "met" : "NOT MET")
}' "$results")
[ -n "$start" ] && echo "sandbox start: $start"
# A run tool call of `true` (issue #24: at most 1.5x bare bwrap), from the
# call's arrival at the long-lived run tool to its answer (the sandbox
# started in-process); its floor is the same sandbox without the kernel
# (the agent's bubblewrap arguments, its memory cgroup, lnk-init's Go
# start, landlock and seccomp).
runcall=$(awk '$1 ~ /^BenchmarkRunToolCallTrue-/ {
  for (i = 3; i < NF; i++) { if ($(i+1) == "link-ns/op") l = $i; if ($(i+1) == "base-ns/op") b = $i; if ($(i+1) == "x-baseline") r = $i; if ($(i+1) == "floor-x-baseline") f = $i }
  if (l != "") printf "run tool call of true: %.1f ms; bare bwrap, same namespaces: %.1f ms; ratio %.2fx (target: at most 1.5x, %s; floor, the same sandbox without the kernel: %.2fx)\n", l/1e6, b/1e6, r, (r <= 1.5 ? "met" : "NOT MET"), f
}' "$results")
[ -n "$runcall" ] && echo "run tool: $runcall"
# Its parts, each timed alone in turns in the same run
# (BenchmarkRunToolCallParts): what the call's time goes to.
runparts=$(awk '$1 ~ /^BenchmarkRunToolCallParts-/ {
  for (i = 3; i < NF; i++) v[$(i+1)] = $i
  printf "grants compiled %.1f ms; kernel connection %.1f ms; the kernel'"'"'s start and end %.1f ms; sandbox built %.1f ms; sandbox run without the kernel %.1f ms, with /bin/true in lnk-init'"'"'s place %.1f ms, with a Go hello there %.1f ms; bare bwrap %.1f ms, with a Go hello %.1f ms\n", v["compile-ns/op"]/1e6, v["dial-ns/op"]/1e6, v["kernel-ns/op"]/1e6, v["build-ns/op"]/1e6, v["sandbox-ns/op"]/1e6, v["noinit-ns/op"]/1e6, v["hello-ns/op"]/1e6, v["base-ns/op"]/1e6, v["bwrap-hello-ns/op"]/1e6
}' "$results")
[ -n "$runparts" ] && echo "run tool parts: $runparts"
# lnk agent start to its harness listening (issue #24: reported, with its
# parts), beside the same harness under bare bwrap with the same
# namespaces.
agentstart=$(awk '$1 ~ /^BenchmarkAgentStartToListening-/ {
  for (i = 3; i < NF; i++) v[$(i+1)] = $i
  if (v["link-ns/op"] != "") printf "lnk agent start to the harness listening: %.1f ms; of it lnk agent start'"'"'s own return %.1f ms, the harness'"'"'s first line %.1f ms; the same harness under bare bwrap, same namespaces: %.1f ms (%.2fx)\n", v["link-ns/op"]/1e6, v["start-ns/op"]/1e6, v["first-line-ns/op"]/1e6, v["base-ns/op"]/1e6, v["x-baseline"]
}' "$results")
[ -n "$agentstart" ] && echo "agent start: $agentstart"
# A Link Harness turn with the built-in model (issue #25): with no tool
# call, the harness's own time beyond the model's answer (a median of at
# most 2 ms); with one run call, the turn over the model's answer plus
# the same tool's call as a new client makes it (at most 1.2x), and over
# a call through a session held open (the floor of a session per turn).
harnessturn=$(awk '$1 ~ /^BenchmarkTurn\/no-call-/ { for (i = 3; i < NF; i++) { if ($(i+1) == "overhead-p50-ns") o = $i; if ($(i+1) == "link-p50-ns") t = $i; if ($(i+1) == "model-p50-ns") m = $i } }
  $1 ~ /^BenchmarkTurn\/one-call-/ { for (i = 3; i < NF; i++) { if ($(i+1) == "x-baseline") r = $i; if ($(i+1) == "x-held") h = $i; if ($(i+1) == "link-p50-ns") ct = $i; if ($(i+1) == "base-p50-ns") cb = $i; if ($(i+1) == "held-p50-ns") ch = $i } }
  END {
    if (o != "") printf "no call: turn p50 %.2f ms; the model'"'"'s own answer in it p50 %.2f ms; the harness beyond it p50 %.2f ms (target: at most 2 ms, %s)\n", t/1e6, m/1e6, o/1e6, (o <= 2000000 ? "met" : "NOT MET")
    if (r != "") printf "one run call: turn p50 %.2f ms; the model'"'"'s answer and one call of the tool p50 %.2f ms; ratio %.2fx (target: at most 1.2x, %s); with the session held: %.2f ms, %.2fx\n", ct/1e6, cb/1e6, r, (r <= 1.2 ? "met" : "NOT MET"), ch/1e6, h
  }' "$results")
[ -n "$harnessturn" ] && echo "$harnessturn" | sed 's/^/harness turn: /'
# A tool call from a client process of its own through the proxy's
# route and the start's bridge (issue #23: the added p50 no more than 10%
# above the build before the bridge became the kernel's child), beside
# the same call straight to the server on stdio, in the same run.
toolcall=$(awk '$1 ~ /^BenchmarkToolsCallFromAClientProcess\// {
  a = ""; d = ""; w = ""; x = ""
  k = ""; kw = ""
  for (i = 3; i < NF; i++) { if ($(i+1) == "added-p50-us") a = $i; if ($(i+1) == "base-p50-ns") d = $i; if ($(i+1) == "was-added-p50-us") w = $i; if ($(i+1) == "added-x-was") x = $i; if ($(i+1) == "kernel-wakes/call") k = $i; if ($(i+1) == "was-kernel-wakes/call") kw = $i }
  name = $1; sub(/^BenchmarkToolsCallFromAClientProcess\//, "", name); sub(/-[0-9]+$/, "", name)
  if (a == "") next
  printf "%s: added p50 %d µs over a direct call of %d µs", name, a, d/1e3
  if (w != "") printf "; the build compared with: %d µs; ratio %.2fx (target: at most 1.10x, %s)", w, x, (x <= 1.10 ? "met" : "NOT MET")
  if (k != "") printf "; kernel wakes per call: %.2f", k
  if (kw != "") printf " (the build compared with: %.2f)", kw
  printf "\n"
}' "$results")
[ -n "$toolcall" ] && echo "$toolcall" | sed 's/^/tool call: /'
# Appending an owner's message to a conversation of 100,000 events
# (issue #25: a median of at most 200 µs, never a rewrite), beside one
# bare O_APPEND write of the same line in the same run.
storeappend=$(awk '$1 ~ /^BenchmarkAppendTo100000Events-/ {
  for (i = 3; i < NF; i++) { if ($(i+1) == "link-p50-ns") l = $i; if ($(i+1) == "base-p50-ns") b = $i; if ($(i+1) == "x-baseline") r = $i }
  if (l != "") printf "append to a conversation of 100,000 events: p50 %.1f µs; bare O_APPEND write of the line: %.1f µs; ratio %.2fx (target: p50 at most 200 µs, %s)\n", l/1e3, b/1e3, r, (l <= 200000 ? "met" : "NOT MET")
}' "$results")
[ -n "$storeappend" ] && echo "conversation store: $storeappend"
# Link Web (issue #26): a fetch of a 100 KB page from a loopback host
# through the lnk-web process, from a minimal MCP client (Link's latency),
# beside a plain http.Get of it in a process of its own asked through a
# pipe (the fair baseline) and in the benchmark's own process, p50 of each
# in the same run. The headline, the tool's overhead (at most 2x): the
# page served as text, no conversion, nothing subtracted, its answer read
# by Link's own reader of a tool's answer (mcpstdio.ReadAnswer); split
# into the time to the answer line's last byte (Link's part) and that
# read; beside it the same call with the line decoded by encoding/json
# in the same ops. Beside it lnk-web's own CPU, the whole call with the page
# made markdown, the call less a conversion timed in the benchmark's
# process (the noisier figure), and the go-sdk client's call. Then HTML
# made markdown (at least 20 MB/s): one page as lnk-web makes it (through
# the tool's gate, its two halves at once where the other slot is free),
# one page whole on one core, two at once through the gate, and in CPU
# time; beside its parts timed in the same ops (x/net/html's parse,
# html-to-markdown alone, the halves at once) and the floor of any design
# built of the two on this machine's cores: 1/(1/parse + 1/(cores x
# converter)).
web=$(awk '$1 ~ /^BenchmarkWebFetch100KB-/ {
  for (i = 3; i < NF; i++) { m[$(i+1)] = $i }
  if (m["text-ns/op"] != "") {
    printf "fetch of a 100 KB page through lnk-web, p50, a minimal MCP client reading the answer with Link'"'"'s own reader of a tool'"'"'s answer (mcpstdio.ReadAnswer): the tool'"'"'s overhead, the page as text (no conversion, its 100 KB carried back), %.2f ms: %.2fx the fair baseline (http.Get in a process of its own through a pipe, %.2f ms; target: at most 2x, %s), %.2fx http.Get in the benchmark'"'"'s process (%.2f ms; %s); of it, to the answer line'"'"'s last byte read %.2f ms (%.2fx the fair baseline: Link'"'"'s part) and ReadAnswer'"'"'s read of the line %.2f ms; with the line decoded by encoding/json instead (%.2f ms, the client'"'"'s JSON) the call is %.2f ms: %.2fx the fair baseline, %.2fx the in-process http.Get; lnk-web'"'"'s own CPU in it %.2f ms; the whole call, the page made markdown, %.2f ms (%.1fx; lnk-web'"'"'s CPU %.2f ms); less a conversion timed in the benchmark'"'"'s process (%.2f ms; the noisier figure) %.2f ms (%.2fx); the fetch without MCP %.2f ms; the go-sdk client'"'"'s whole call %.2f ms (%.1fx its baseline, the agent'"'"'s client)\n", \
      m["text-fast-ns/op"]/1e6, m["x-text-fast"], m["fair-ns/op"]/1e6, (m["x-text-fast"] <= 2 ? "met" : "NOT MET"), m["text-fast-x-base"], m["base-ns/op"]/1e6, (m["text-fast-x-base"] <= 2 ? "met" : "NOT MET"), \
      m["text-line-ns/op"]/1e6, m["x-text-line"], m["text-read-ns/op"]/1e6, \
      m["text-decode-ns/op"]/1e6, m["text-ns/op"]/1e6, m["x-text"], m["text-x-base"], m["text-cpu-ns/op"]/1e6, \
      m["link-ns/op"]/1e6, m["x-fair"], m["link-cpu-ns/op"]/1e6, m["conv-ns/op"]/1e6, m["overhead-ns/op"]/1e6, m["x-overhead"], m["fetch-ns/op"]/1e6, m["gosdk-ns/op"]/1e6, m["gosdk-x-fair"]
  }
  delete m
}
$1 ~ /^BenchmarkWebConvert-/ { for (i = 3; i < NF; i++) { c[$(i+1)] = $i } }
END { if (c["conv-MB/s"] != "") printf "conversion: %.1f MB/s one page as lnk-web makes it, through the tool'"'"'s gate (its two halves at once where the gate'"'"'s other slot is free; target: at least 20, %s), %.1f MB/s one page whole on one core, %.1f MB/s two pages at once through the gate; in CPU time one page whole %.1f MB/s, cut in two %.1f MB/s; in the same ops x/net/html'"'"'s parse and prune %.1f MB/s, html-to-markdown alone %.1f MB/s, the two halves'"'"' conversions at once %.1f MB/s; the floor of any design of the two on %d cores, 1/(1/parse + 1/(cores x converter)), %.1f MB/s%s\n", c["gate-MB/s"], (c["gate-MB/s"] >= 20 ? "met" : "NOT MET"), c["conv-MB/s"], c["two-at-once-MB/s"], c["conv-cpu-MB/s"], c["gate-cpu-MB/s"], c["parse-MB/s"], c["converter-alone-MB/s"], c["halves-MB/s"], c["ncpu"], c["floor-MB/s"], (c["floor-MB/s"] < 20 ? ": below the target, so no design using the required parser and converter meets it on this machine" : "") }' "$results")
[ -n "$web" ] && echo "web: $web"
# Link Harness's own call of a tool (services/harness/tools): a fetch of
# a 100 KB text page by Turn.Call (the go-sdk client over streamable HTTP,
# through the sandbox's real proxy, its tool route and the bridge, to
# lnk-web on stdio), in a session held open and as a turn's first call
# (its session opened and ended), beside, in the same run and the same ops, the same
# fetch through the same route from a minimal HTTP client, the go-sdk
# client over stdio, and a minimal client over stdio (the baseline); and
# the benchmark process's CPU in the harness's call and in the minimal
# one's (the client's and the bridge's work).
harnesscall=$(awk '$1 ~ /^BenchmarkHarnessToolCall100KB-/ {
  for (i = 3; i < NF; i++) { m[$(i+1)] = $i }
  if (m["link-p50-ns"] != "")
    printf "the harness'"'"'s call of a 100 KB fetch through the proxy'"'"'s tool route and the bridge, in a session held open, p50 %.2f ms: %.2fx a minimal client'"'"'s call of lnk-web on stdio (%.2f ms, the baseline), %.2fx the go-sdk client'"'"'s call on stdio (%.2f ms); a turn'"'"'s first call, its session opened and ended, %.2f ms (%.2fx the baseline); the same route from a minimal HTTP client %.2f ms (%.2fx the baseline); this process'"'"'s CPU (the client and the bridge) in the harness'"'"'s call %.2f ms, in the minimal client'"'"'s %.2f ms\n", \
      m["link-p50-ns"]/1e6, m["x-stdio"], m["stdio-p50-ns"]/1e6, m["x-gosdk-stdio"], m["gosdk-stdio-p50-ns"]/1e6, m["turn-p50-ns"]/1e6, m["turn-x-stdio"], m["route-p50-ns"]/1e6, m["route-x-stdio"], m["link-cpu-p50-ns"]/1e6, m["route-cpu-p50-ns"]/1e6
  delete m
}' "$results")
[ -n "$harnesscall" ] && echo "harness tool call: $harnesscall"
# lnk agent send to Link Harness with the built-in model and no tool call
# (issue #25), from the send's start to its answer, in parts: the owner's
# client in-process (proof, carried port, turn) and the model's own answer.
agentsend=$(awk '$1 ~ /^BenchmarkAgentSendRoundTrip-/ {
  for (i = 3; i < NF; i++) { if ($(i+1) == "link-ns/op") l = $i; if ($(i+1) == "client-ns/op") c = $i; if ($(i+1) == "model-ns/op") m = $i }
  if (l != "") printf "lnk agent send, built-in model, no tool call: %.1f ms; of it the client in-process (proof, port, turn): %.1f ms; the model straight: %.1f ms\n", l/1e6, c/1e6, m/1e6
}' "$results")
[ -n "$agentsend" ] && echo "agent send: $agentsend"
# Webhook posts to 202 on loopback, each signature checked by
# lnk-webhook (issue #27: at least 0.5x a plain Go HTTP handler's rate),
# beside that handler in the same run, in interleaved turns.
webhookposts=$(awk '$1 ~ /^BenchmarkWebhookPosts-/ {
  for (i = 3; i < NF; i++) { v[$(i+1)] = $i }
  if (v["webhook-posts/s"] != "") printf "webhook posts (64 at once, median of 5 interleaved turns [range]): %.0f/s [%.0f-%.0f], p50 to 202 %.1f ms [%.1f-%.1f]; plain Go handler: %.0f/s [%.0f-%.0f], p50 %.1f ms [%.1f-%.1f]; ratio %.3fx [%.3f-%.3f] (target: at least 0.5x, %s); %.1f posts per write of hooks-seen.log\n", v["webhook-posts/s"], v["webhook-posts/s-min"], v["webhook-posts/s-max"], v["webhook-p50-ns"]/1e6, v["webhook-p50-ns-min"]/1e6, v["webhook-p50-ns-max"]/1e6, v["plain-posts/s"], v["plain-posts/s-min"], v["plain-posts/s-max"], v["plain-p50-ns"]/1e6, v["plain-p50-ns-min"]/1e6, v["plain-p50-ns-max"]/1e6, v["x-baseline"], v["x-baseline-min"], v["x-baseline-max"], (v["x-baseline"] >= 0.5 ? "met" : "NOT MET"), v["posts/write"]
}' "$results")
[ -n "$webhookposts" ] && echo "webhooks: $webhookposts"
# A webhook listener's start on a full record (64 MiB of ids in
# hooks-seen.json): its reading beside the reader before it and
# encoding/json decoding the same text into a plain map, in the same
# run, in interleaved turns (wall and CPU time), and the whole start.
seenload=$(awk '$1 ~ /^BenchmarkSeenLoad64MiB-/ {
  for (i = 3; i < NF; i++) { v[$(i+1)] = $i }
  if (v["fast-ms"] != "") printf "reading a full hooks-seen.json (%.0f MiB, %d ids; medians of 5 interleaved turns [range]): %.0f ms [%.0f-%.0f], CPU %.0f ms [%.0f-%.0f]; the reader before: %.0f ms [%.0f-%.0f], CPU %.0f ms [%.0f-%.0f]; encoding/json into a plain map: %.0f ms [%.0f-%.0f], CPU %.0f ms [%.0f-%.0f]; ratio to the reader before %.3fx [%.3f-%.3f], to the plain map %.3fx [%.3f-%.3f]; the listener'"'"'s whole start on it (lock, read, fold, fsync): %.0f ms [%.0f-%.0f], CPU %.0f ms\n", v["MiB"], v["ids"], v["fast-ms"], v["fast-ms-min"], v["fast-ms-max"], v["fast-cpu-ms"], v["fast-cpu-ms-min"], v["fast-cpu-ms-max"], v["old-ms"], v["old-ms-min"], v["old-ms-max"], v["old-cpu-ms"], v["old-cpu-ms-min"], v["old-cpu-ms-max"], v["json-map-ms"], v["json-map-ms-min"], v["json-map-ms-max"], v["json-map-cpu-ms"], v["json-map-cpu-ms-min"], v["json-map-cpu-ms-max"], v["x-old"], v["x-old-min"], v["x-old-max"], v["x-baseline"], v["x-baseline-min"], v["x-baseline-max"], v["start-ms"], v["start-ms-min"], v["start-ms-max"], v["start-cpu-ms"]
}' "$results")
[ -n "$seenload" ] && echo "webhook record: $seenload"
# A move (issue #29): lnk agent state-send | lnk agent receive of 1 GiB
# of files (LNK_BENCH_MOVE_MB for less), beside tar c | tar x of the same
# files in the same run (at least 0.5x its rate).
agentmove=$(awk '$1 ~ /^BenchmarkStateSendReceiveBesideTar-/ {
  for (i = 3; i < NF; i++) { if ($(i+1) == "move-MB/s") m = $i; if ($(i+1) == "tar-MB/s") t = $i; if ($(i+1) == "rate-x-tar") r = $i; if ($(i+1) == "MiB") s = $i }
  if (m != "") printf "state-send | receive of %d MiB: %.1f MB/s; tar c | tar x: %.1f MB/s; ratio %.2fx (target: at least 0.5x, %s)\n", s, m, t, r, (r >= 0.5 ? "met" : "NOT MET")
}' "$results")
[ -n "$agentmove" ] && echo "agent move: $agentmove"
# The sealed stream (issue #29: at least 1.0x age), sealing 1 GiB beside
# age on the same data in turns of 1 MiB: the total's ratio, and the
# median over the turns of age's time for a MiB over Link's for the MiB
# beside it, which a turn the machine's other work interrupts does not move.
sealed=$(awk '$1 ~ /^BenchmarkSeal1GiB-/ {
  for (i = 3; i < NF; i++) { v[$(i+1)] = $i }
  if (v["link-MB/s"] != "") printf "sealing 1 GiB: %.0f MB/s; age: %.0f MB/s; ratio %.3fx, median of its 1 MiB turns %.3fx (target: at least 1.0x, %s)\n", v["link-MB/s"], v["age-MB/s"], v["x-baseline"], v["x-median-turn"], (v["x-median-turn"] >= 1.0 ? "met" : "NOT MET")
}' "$results")
[ -n "$sealed" ] && echo "sealed stream: $sealed"
# Every figure of the run goes to docs/PERFORMANCE.md, the one place
# figures live (code comments say what and why, never a measurement):
# the part between its bench markers is written anew; the analyses below
# them, each dated, are kept. A run of some benchmarks alone (BENCH=…)
# writes nothing: that part always holds one whole run.
if [ -z "${BENCH:-}" ]; then
  doc=docs/PERFORMANCE.md
  kept=$(mktemp)
  [ -f "$doc" ] && sed -n '/^<!-- bench:end -->$/,$p' "$doc" | tail -n +2 > "$kept"
  {
    echo "# Performance"
    echo
    echo "<!-- bench:start: written by make bench (scripts/bench.sh); edits here are lost -->"
    echo "The last whole run of \`make bench\`: each figure beside its baseline"
    echo "measured in the same run (the x-baseline column). Machine: $machine,"
    echo "$(date -u +%Y-%m-%d)."
    if [ -n "$start" ]; then
      echo
      echo "## Sandbox start"
      echo
      echo "$start"
    fi
    if [ -n "$runcall" ]; then
      echo
      echo "## Run tool call"
      echo
      echo "$runcall"
      [ -n "$runparts" ] && { echo; echo "Its parts, each alone: $runparts"; }
    fi
    if [ -n "$agentstart" ]; then
      echo
      echo "## Agent start"
      echo
      echo "$agentstart"
    fi
    if [ -n "$harnessturn" ]; then
      echo
      echo "## Link Harness's turn"
      echo
      echo "$harnessturn"
    fi
    if [ -n "$toolcall" ]; then
      echo
      echo "## Tool call"
      echo
      echo "$toolcall"
    fi
    if [ -n "$storeappend" ]; then
      echo
      echo "## Conversation store"
      echo
      echo "$storeappend"
    fi
    if [ -n "$web" ]; then
      echo
      echo "## Link Web"
      echo
      echo "$web"
    fi
    if [ -n "$harnesscall" ]; then
      echo
      echo "## Link Harness's tool call"
      echo
      echo "$harnesscall"
    fi
    if [ -n "$agentsend" ]; then
      echo
      echo "## Agent send"
      echo
      echo "$agentsend"
    fi
    if [ -n "$webhookposts" ]; then
      echo
      echo "## Webhook posts"
      echo
      echo "$webhookposts"
    fi
    if [ -n "$seenload" ]; then
      echo
      echo "## Webhook listener's start on a full record"
      echo
      echo "$seenload"
    fi
    if [ -n "$agentmove" ]; then
      echo
      echo "## Agent move"
      echo
      echo "$agentmove"
    fi
    if [ -n "$sealed" ]; then
      echo
      echo "## Sealed stream"
      echo
      echo "$sealed"
    fi
    echo
    echo "## Every benchmark"
    echo
    echo '```'
    cat "$results"
    echo '```'
    echo "<!-- bench:end -->"
    cat "$kept"
  } > "$doc.tmp" && mv "$doc.tmp" "$doc"
  rm -f "$kept"
fi
# The per-call latencies (#9's route, #11's read) again with every
# process on one core: a diagnostic beside the figures above, never what
# a target is judged on. On a VM whose idle cores halt (haltpoll with no
# polling), waking a process on another core costs tens of µs each time,
# and a call through Link wakes more processes than a direct one; on one
# core no wake-up crosses cores, so what remains is closer to Link's own
# work.
if [ -z "${BENCH:-}" ] && command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
  echo "one core (diagnostic: taskset -c 0)"
  taskset -c 0 go test -p 1 -run '^$' -bench 'ToolsCallThroughRouteVsDirect|Read4KiB' -benchtime "${BENCHTIME:-1s}" -count 1 -timeout 10m \
    ./services/toolbridge ./services/filetool 2>&1 | figures
fi

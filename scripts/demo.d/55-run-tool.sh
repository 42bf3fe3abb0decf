# Part 5½ of make demo (sourced by scripts/demo.sh, which gives step,
# shown, holds, fail, $LNK and a throwaway HOME; 10-agent.sh made the
# agent "demo"): the run tool, run-<agent id>, as the agent's harness
# reaches it. lnk-run-tool serves MCP on its stdin and stdout, outside
# every sandbox; each call runs in a sandbox of its own made from the
# agent's grants, and a background command runs under a supervisor of its
# own, its output written to the agent's Home/background from outside.
run_tool="$(dirname "$LNK")/lnk-run-tool"
coproc RUNTOOL { "$run_tool" serve --agent demo 2>&1; }
# rt_say sends one JSON-RPC line; rt_answer reads lines up to the answer
# with id $1 (10 s at most) into rt_out.
rt_say() { printf '%s\n' "$1" >&"${RUNTOOL[1]}"; }
rt_answer() {
  rt_out=""
  local line
  while IFS= read -r -t 10 line <&"${RUNTOOL[0]}"; do
    if [[ "$line" == *"\"id\":$1,"* || "$line" == *"\"id\":$1}"* ]]; then rt_out=$line; return 0; fi
  done
  fail "the run tool gave no answer to call $1"
}
rt_call() { # id, tool, arguments JSON, [thread]
  local meta=""
  [ -n "${4:-}" ] && meta=",\"_meta\":{\"link.local/thread\":\"$4\"}"
  step "run tool: $2 $3"
  rt_say "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3$meta}}"
  rt_answer "$1"
  shown_out=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(("(refused) " if r["result"].get("isError") else "")+"".join(c.get("text","") for c in r["result"]["content"]))' "$rt_out")
  printf '%s\n' "$shown_out"
}
run "$LNK" agent allow demo --command sleep
rt_say '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"make-demo","version":"1"}}}'
rt_answer 1
rt_say '{"jsonrpc":"2.0","method":"notifications/initialized"}'
rt_call 2 command '{"argv":["sh","-c","echo hello from a sandbox of its own"]}'
holds "the run tool's call did not run" "hello from a sandbox of its own"
holds "the call did not end with its exit status" "\[exit 0\]"
# curl is outside [commands]: refused before it runs; the name is a
# reserved one (.invalid) that never resolves, so nothing leaves here.
rt_call 3 command '{"argv":["curl","http://blocked.invalid/"]}'
holds "a program outside [commands] was not refused" "\(refused\)"
rt_call 4 start '{"argv":["sh","-c","echo background begins; sleep 1; echo background ends"]}' demo-thread
rt_bg=$(sed -n 's/.*\b\([0-9a-f]\{8,\}\)\b.*/\1/p' <<<"$shown_out" | head -1)
[ -n "$rt_bg" ] || fail "the background command's start answered no ID"
rt_call 5 list '{}' demo-thread
holds "list does not show the conversation's background command" "$rt_bg"
rt_call 6 list '{}' other-thread
grep -q "$rt_bg" <<<"$shown_out" && fail "another conversation sees this one's background command"
for _ in $(seq 50); do grep -q "background ends" "$HOME/Link/Agents/demo/Home/background/$rt_bg.out" 2>/dev/null && break; sleep 0.1; done
rt_call 7 read "{\"id\":\"$rt_bg\"}" demo-thread
holds "the background command's output was not read back" "background begins"
holds "the background command did not run to its end" "background ends"
exec {RUNTOOL[1]}>&-
wait "$RUNTOOL_PID" 2>/dev/null || true

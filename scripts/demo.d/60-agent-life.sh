# Part 6 of make demo (sourced by scripts/demo.sh, which gives step, run,
# shown, holds, lacks, fail, $LNK and a throwaway HOME; 10-agent.sh made
# the agent "demo"): the agent runs. lnk agent start records its program
# ([start] command in its agent.toml) and starts it under a supervisor in
# the background, in its sandbox behind its proxy, its output appended to
# ~/.lnk/agents/demo/logs/harness.log from outside; status says what runs
# and what it enforces, and logs shows the harness's lines since this
# start. While it runs, its run tool (55-run-tool.sh's rt_call) runs a
# command and starts a background command, which status lists; stop ends
# the supervisor, the sandbox and everything in it, the background
# command too. Until Link Harness, the harness is a shell that says its
# port and waits.
life_log="$HOME/.lnk/agents/demo/logs/harness.log"
# Whatever happens below, the agent is stopped before HOME is removed.
trap '"$LNK" agent stop demo >/dev/null 2>&1 || true; cleanup' EXIT
run "$LNK" agent allow demo --command sleep
shown "$LNK" agent start demo -- /bin/sh -c 'echo "harness up, its first port LNK_PORT=$LNK_PORT"; exec sleep 600'
holds "the agent did not start" "running   yes: harness pid [0-9]+"
holds "the agent does not run in its sandbox" "sandbox   on"
holds "the agent got no block of ports" "ports     [0-9]+-[0-9]+ \(LNK_PORT=[0-9]+\)"
life_json=$("$LNK" agent status demo --json)
life_pid=$(sed -n 's/^  "pid": \([0-9]*\),$/\1/p' <<<"$life_json")
life_sup=$(sed -n 's/^  "supervisor_pid": \([0-9]*\),$/\1/p' <<<"$life_json")
[ -n "$life_pid" ] && [ -n "$life_sup" ] || fail "status --json named no harness or supervisor pid"
for _ in $(seq 100); do grep -q "harness up" "$life_log" 2>/dev/null && break; sleep 0.1; done
shown "$LNK" agent status demo
holds "status does not say the agent runs" "running   yes: harness pid $life_pid"
holds "status does not say what the sandbox enforces" "enforces"
shown "$LNK" agent logs demo
holds "lnk agent logs lacks the harness's output" "harness up, its first port LNK_PORT=[0-9]+"
# The agent's run tool while it runs: a command, and a background command
# that runs until the agent's stop ends it.
coproc RUNTOOL { "$run_tool" serve --agent demo 2>&1; }
rt_say '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"make-demo","version":"1"}}}'
rt_answer 1
rt_say '{"jsonrpc":"2.0","method":"notifications/initialized"}'
rt_call 2 command '{"argv":["sh","-c","echo run while the agent runs"]}'
holds "the run tool's call did not run while the agent ran" "run while the agent runs"
life_mark="60$RANDOM.$RANDOM"
rt_call 3 start "{\"argv\":[\"sleep\",\"$life_mark\"]}" life-thread
life_bg=$(sed -n 's/.*\b\([0-9a-f]\{8,\}\)\b.*/\1/p' <<<"$shown_out" | head -1)
[ -n "$life_bg" ] || fail "the background command's start answered no ID"
life_sleeping() { grep -qa "sleep.$life_mark" /proc/[0-9]*/cmdline 2>/dev/null; }
for _ in $(seq 100); do life_sleeping && break; sleep 0.1; done
life_sleeping || fail "the background command does not run"
shown "$LNK" agent status demo
holds "status does not list the background command" "$life_bg running sleep $life_mark"
shown "$LNK" agent stop demo
holds "the agent did not stop" "stopped agent demo"
shown "$LNK" agent status demo
holds "status says the agent still runs" "running   no"
holds "status does not say the background command ended" "$life_bg ended sleep $life_mark"
life_sleeping && fail "the background command still runs after the agent's stop"
rt_call 4 list '{}' life-thread
holds "run__list does not say the agent's stop stopped it" "$life_bg.*stopped"
exec {RUNTOOL[1]}>&-
wait "$RUNTOOL_PID" 2>/dev/null || true
# Gone, or a zombie its parent has yet to reap: ended either way.
for p in "$life_pid" "$life_sup"; do
  [ ! -e "/proc/$p" ] || grep -qE '\) Z ' "/proc/$p/stat" 2>/dev/null || fail "process $p of the agent still runs after stop"
done
printf 'no process of the agent is left (harness pid %s, supervisor pid %s), nor its background command\n' "$life_pid" "$life_sup"

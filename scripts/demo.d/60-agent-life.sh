# Part 6 of make demo (sourced by scripts/demo.sh, which gives step, run,
# shown, holds, lacks, fail, $LNK and a throwaway HOME; 10-agent.sh made
# the agent "demo"): the agent runs. lnk agent start records its program
# ([start] command in its agent.toml) and starts it under a supervisor in
# the background, in its sandbox behind its proxy, its output appended to
# ~/.lnk/agents/demo/logs/harness.log from outside; status says what runs
# and what it enforces; stop ends the supervisor, the sandbox and
# everything in it. Until Link Harness, the harness is a shell that says
# its port and waits.
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
shown cat "$life_log"
holds "the harness's output is not in its log" "harness up, its first port LNK_PORT=[0-9]+"
shown "$LNK" agent stop demo
holds "the agent did not stop" "stopped agent demo"
shown "$LNK" agent status demo
holds "status says the agent still runs" "running   no"
# Gone, or a zombie its parent has yet to reap: ended either way.
for p in "$life_pid" "$life_sup"; do
  [ ! -e "/proc/$p" ] || grep -qE '\) Z ' "/proc/$p/stat" 2>/dev/null || fail "process $p of the agent still runs after stop"
done
printf 'no process of the agent is left (harness pid %s, supervisor pid %s)\n' "$life_pid" "$life_sup"

# Part 5 of make demo (sourced by scripts/demo.sh, which gives step, run,
# $LNK and a throwaway HOME; 10-agent.sh made the agent "demo"): the
# agent's files through lnk-file-tool, an MCP server on stdio that runs
# every call in a sandbox — lnk sandbox run, then lnk-file-tool apply —
# started at the first call and kept for the session, under the agent's
# own grants (its files folder read, its work/ written). The agent is
# granted the tool's program first; apply is told notes/ too, which the
# sandbox does not write: the sandbox holds where the tool's check would
# not.
ft_bin="$(dirname "$LNK")"
ft_files="$HOME/Link/Agents/demo/Home"
ft_log="$HOME/file-tool.log"
mkdir -p "$ft_files/work" "$ft_files/notes"
printf '# Site\n\nThe site is built from index.html.\n' >"$ft_files/notes/site.md"
run "$LNK" agent allow demo --command "$ft_bin/lnk-file-tool" --read "$ft_bin"
step "lnk-file-tool serve -- lnk sandbox run --agent demo -- lnk-file-tool apply --files ~/Link/Agents/demo/Home --write work --write notes"
coproc FT { "$ft_bin/lnk-file-tool" serve -- "$LNK" sandbox run --agent demo -- \
  "$ft_bin/lnk-file-tool" apply --files "$ft_files" --write work --write notes 2>"$ft_log"; }
ft_id=0
# ft_rpc METHOD PARAMS: one JSON-RPC request, its answer line in ft_line
# (in this shell: a coprocess's pipes are not a subshell's).
ft_rpc() {
  ft_id=$((ft_id + 1))
  printf '{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}\n' "$ft_id" "$1" "$2" >&"${FT[1]}"
  ft_line=""
  IFS= read -r -t 60 ft_line <&"${FT[0]}" || true
}
# ft_call NAME ARGS: a tools/call, its answer shown (a refusal as one).
ft_call() {
  step "file tool: $1 $2"
  ft_rpc tools/call "{\"name\":\"$1\",\"arguments\":$2}"
  printf '%s\n' "$ft_line" | python3 -c '
import json, sys
line = sys.stdin.read().strip()
if not line:
    print("(no answer)"); sys.exit()
res = json.loads(line).get("result", {})
text = (res.get("content") or [{}])[0].get("text", "")
if res.get("isError"):
    print("refused: " + text); sys.exit()
ans = json.loads(text)
diff = ans.pop("diff", None)
print(json.dumps(ans, indent=1, ensure_ascii=False))
if diff:
    print(diff, end="")'
}
ft_rpc initialize '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}'
printf '{"jsonrpc":"2.0","method":"notifications/initialized"}\n' >&"${FT[1]}"
# ft_ok WHAT / ft_refused WHAT: the last call was answered, or refused,
# else the demo fails saying WHAT.
ft_ok() { [[ -n $ft_line && $ft_line != *'"isError":true'* ]] || fail "$1"; }
ft_refused() { [[ $ft_line == *'"isError":true'* ]] || fail "$1"; }
ft_call read '{"path":"notes/site.md"}'
ft_ok "the file tool could not read the agent's notes"
[[ $ft_line == *"The site is built"* ]] || fail "the file tool's read did not give the file's text"
ft_call write '{"path":"work/todo.md","content":"- publish the site\n"}'
ft_ok "the file tool could not write in work/"
ft_call replace '{"path":"work/todo.md","old":"publish","new":"check, then publish"}'
ft_ok "the file tool could not replace in work/todo.md"
ft_call find '{"text":"site"}'
ft_ok "the file tool's find failed"
# Outside every --write folder: apply refuses it, saying why.
ft_call write '{"path":"site-notes.md","content":"x"}'
ft_refused "a write outside every --write folder was not refused"
# In notes/, which apply was told it may write but the sandbox binds
# read-only: the sandbox refuses it.
ft_call write '{"path":"notes/site.md","content":"x"}'
ft_refused "a write the sandbox does not allow was not refused"
grep -q "The site is built" "$ft_files/notes/site.md" || fail "notes/site.md was written through a sandbox that binds it read-only"
exec {FT[1]}>&-
wait "$FT_PID" 2>/dev/null || true
step "cat file-tool.log   (each refusal once, its reason, never the path)"
cat "$ft_log"

# The same tool behind the bridge, as the agent reaches it: added as a
# tool, then called from inside a sandbox (curl, streamable HTTP to
# $LNK_TOOL_FILES through the sandbox's proxy), every call allowed by
# name. This time serve --agent demo builds its sandbox from the agent's
# grants (lnk sandbox file --agent demo: its Home read, work/ written, no
# network), and apply is told the same. The refusal comes back to the
# caller with its reason.
run "$LNK" sandbox tool add files -- "$ft_bin/lnk-file-tool" serve --agent demo
shown "$LNK" sandbox run --tool files --allow read --allow write --allow find --command curl --command cut --command tr --command sed --command grep -- sh -c '
  post() { curl -sS --noproxy "*" -D /tmp/h -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" ${sid:+-H "Mcp-Session-Id: $sid"} --data "$1" "$LNK_TOOL_FILES" | sed -n "s/.*\"text\":\"//; s/\(.*\)\"}\].*/\1/p" | cut -c1-240; }
  post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}"
  sid=$(tr -d "\r" </tmp/h | sed -n "s/^Mcp-Session-Id: //Ip")
  post "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"
  echo "-- read work/todo.md:"; post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"work/todo.md\"}}}"
  echo "-- write work/done.md:"; post "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"write\",\"arguments\":{\"path\":\"work/done.md\",\"content\":\"- nothing yet\\n\"}}}"
  echo "-- find *.md:"; post "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"find\",\"arguments\":{\"name\":\"*.md\"}}}"
  echo "-- write notes/site.md (outside --write):"; post "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"write\",\"arguments\":{\"path\":\"notes/site.md\",\"content\":\"x\"}}}"'
holds "the file tool's read through the bridge did not answer" "check, then publish"
[ -f "$ft_files/work/done.md" ] || fail "the file tool's write through the bridge did not write work/done.md"
grep -q "The site is built" "$ft_files/notes/site.md" || fail "notes/site.md, outside --write, was written through the bridge"

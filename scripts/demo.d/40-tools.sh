# Part 4 of make demo (sourced by scripts/demo.sh, which gives run and $LNK
# and a throwaway HOME): an MCP server added as a tool runs outside every
# sandbox; a client inside one (curl, speaking streamable HTTP to
# $LNK_TOOL_EVERYTHING through the sandbox's proxy) lists its tools and
# calls two: echo, allowed by name, and get-sum, which is asked — the
# owner answers it from the question store with lnk ask answer. The audit
# log shows each call by name, never its arguments.
everything="$PWD/services/toolbridge/testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if ! command -v node >/dev/null || [ ! -f "$everything" ]; then
  echo "(tools part skipped: node and services/toolbridge/testdata/npm — make deps installs them)"
else
run "$LNK" sandbox tool add everything -- node "$everything" stdio
run "$LNK" sandbox tool list
"$LNK" ask list >/dev/null 2>&1 || true # makes the question store
# The owner answering: while this loop holds the store's "someone answers"
# lock (as a terminal or a chat does), questions wait there and it says yes.
(
  umask 077; exec 9>>"$HOME/.lnk/questions/.answering"; flock -s 9
  for _ in $(seq 1 300); do
    for id in $("$LNK" ask list --json 2>/dev/null | grep -o '"id": *"[a-z0-9]*"' | grep -o '[a-z0-9]*"$' | tr -d '"'); do
      printf '\n\033[1m$ %s\033[0m\n' "lnk ask answer $id yes   (from the store)"
      "$LNK" ask list
      "$LNK" ask answer "$id" yes
    done
    [ -f "$HOME/.demo-tools-done" ] && exit 0
    sleep 0.1
  done
) &
answering=$!
shown "$LNK" sandbox run --tool everything --allow echo --command curl --command cut --command tr --command sed --command grep -- sh -c '
  post() { curl -sS --noproxy "*" -D /tmp/h -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" ${sid:+-H "Mcp-Session-Id: $sid"} --data "$1" "$LNK_TOOL_EVERYTHING"; echo; }
  echo "-- LNK_TOOL_EVERYTHING=${LNK_TOOL_EVERYTHING%%/_link/*}/_link/s/<secret>/mcp/everything"
  post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"sampling\":{}},\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}" | cut -c1-160
  sid=$(tr -d "\r" </tmp/h | sed -n "s/^Mcp-Session-Id: //Ip")
  post "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"
  echo "-- tools/list:"; post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}" | grep -o "\"name\":\"[a-z-]*\"" | tr "\n" " "; echo
  echo "-- echo (allowed by name):"; post "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"message\":\"hello through the bridge\"}}}"
  echo "-- get-sum (asked):"; post "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"get-sum\",\"arguments\":{\"a\":2,\"b\":3}}}"'
touch "$HOME/.demo-tools-done"
wait "$answering" || true
holds "the tools were not listed through the bridge" '"name":"echo"'
holds "echo, allowed by name, did not answer" "Echo: hello through the bridge"
holds "get-sum, asked and answered yes, did not answer" "The sum of 2 and 3 is 5"
step "the audit log: each call by name, never its arguments"
shown grep '"mcp ' "$HOME/.lnk/log/audit.log"
holds "the audit log has no line of the echo call" "echo"
holds "the audit log has no line of the get-sum call" "get-sum"
lacks "the audit log holds a call's arguments" "hello through the bridge"
fi

# Part 3 of make demo (sourced by scripts/demo.sh after 10-agent.sh, which
# made agent demo with ~/Projects/site granted): a command in the agent's
# sandbox reads the granted folder, fails to read ~/.ssh, fails to reach
# the network directly; then lnk sandbox check tries every way out.
mkdir -p "$HOME/.ssh" && chmod 700 "$HOME/.ssh"
echo "demo private key" > "$HOME/.ssh/id_demo" && chmod 600 "$HOME/.ssh/id_demo"
echo "hello from the granted folder" > "$HOME/Projects/site/index.html"
shown "$LNK" sandbox run --agent demo -- bash -c '
  echo "-- reads the granted folder:"; cat "$1/index.html"
  echo "-- reads ~/.ssh:"; cat "$2" 2>&1
  echo "-- reaches 1.1.1.1:443 directly:"; (exec 3<>/dev/tcp/1.1.1.1/443) 2>&1 && echo "connected directly"
  echo "-- the only way out is the proxy: HTTPS_PROXY=$HTTPS_PROXY"' \
  bash "$HOME/Projects/site" "$HOME/.ssh/id_demo"
holds "the sandbox could not read the folder granted to it" "hello from the granted folder"
lacks "the sandbox read ~/.ssh" "demo private key"
lacks "the sandbox reached the network directly" "connected directly"
holds "the sandbox had no proxy to reach the network through" "HTTPS_PROXY=http://"
shown "$LNK" sandbox run --agent demo --json-status -- sh -c 'exit 3'
holds "--json-status said nothing of what was enforced" '"landlock":true'
holds "the command's exit status did not come back" '\(exit 3\)'
step "$LNK sandbox check --agent demo"
"$LNK" sandbox check --agent demo || fail "lnk sandbox check found a way out of the sandbox open"

# Part 3 of make demo (sourced by scripts/demo.sh after 10-agent.sh, which
# made agent demo with ~/Projects/site granted): a command in the agent's
# sandbox reads the granted folder, fails to read ~/.ssh, fails to reach
# a listener on the host's loopback directly (its network is its own;
# nothing is ever dialled off this machine); then lnk sandbox check tries
# every way out.
mkdir -p "$HOME/.ssh" && chmod 700 "$HOME/.ssh"
echo "demo private key" > "$HOME/.ssh/id_demo" && chmod 600 "$HOME/.ssh/id_demo"
echo "hello from the granted folder" > "$HOME/Projects/site/index.html"
# A listener on the host's 127.0.0.1, at a port the kernel picks, that
# greets whoever connects: the host reaches it (the control), the
# sandbox must not.
python3 -c 'import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    c.sendall(b"greetings from the host loopback\n")
    c.close()' "$HOME/listener-port" &
listener_pid=$!
trap 'kill "$listener_pid" 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 100); do [ -s "$HOME/listener-port" ] && break; sleep 0.05; done
port=$(cat "$HOME/listener-port") || fail "the host's loopback listener did not start"
shown bash -c 'echo "-- the host reaches its own 127.0.0.1:$1:"; exec 3<>"/dev/tcp/127.0.0.1/$1" && read -r l <&3 && echo "$l"' bash "$port"
holds "the host could not reach its own loopback listener (the control)" "greetings from the host loopback"
shown "$LNK" sandbox run --agent demo -- bash -c '
  echo "-- reads the granted folder:"; cat "$1/index.html"
  echo "-- reads ~/.ssh:"; cat "$2" 2>&1
  echo "-- reaches the host'"'"'s 127.0.0.1:$3 directly:"; (exec 3<>"/dev/tcp/127.0.0.1/$3" && read -r l <&3 && echo "$l") 2>&1
  echo "-- the only way out is the proxy: HTTPS_PROXY=$HTTPS_PROXY"' \
  bash "$HOME/Projects/site" "$HOME/.ssh/id_demo" "$port"
holds "the sandbox could not read the folder granted to it" "hello from the granted folder"
lacks "the sandbox read ~/.ssh" "demo private key"
lacks "the sandbox reached the host's loopback directly" "greetings from the host loopback"
holds "the sandbox had no proxy to reach the network through" "HTTPS_PROXY=http://"
shown "$LNK" sandbox run --agent demo --json-status -- sh -c 'exit 3'
holds "--json-status said nothing of what was enforced" '"landlock":true'
holds "the command's exit status did not come back" '\(exit 3\)'
step "$LNK sandbox check --agent demo"
"$LNK" sandbox check --agent demo || fail "lnk sandbox check found a way out of the sandbox open"
kill "$listener_pid" 2>/dev/null || true

# Part 2 of make demo (sourced by scripts/demo.sh, which gives run and $LNK
# and a throwaway HOME; 10-agent.sh made the agent "demo"): the kernel
# starts on demand, turns the agent's grants into capabilities and revokes
# them, answers no-op round trips, and logs what it did; then it stops.
run "$LNK" kernel start
run "$LNK" kernel status
run "$LNK" kernel caps demo
run "$LNK" kernel ping --count 2000
run "$LNK" sandbox log --lines 20
run "$LNK" kernel stop

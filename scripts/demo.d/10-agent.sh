# Part 1 of make demo (sourced by scripts/demo.sh, which gives run and $LNK
# and a throwaway HOME): an agent, a granted folder, a refused grant, and
# the permissions it ends up with.
mkdir -p "$HOME/Projects/site"
run "$LNK" agent create demo
run "$LNK" agent allow demo --write '~/Projects/site' --internet-host api.example.com
# A forbidden grant: writing a dot folder of the home folder is a way out
# of the sandbox, so caps refuses it (exit 3) and writes nothing.
run "$LNK" agent allow demo --write '~/.ssh'
run "$LNK" agent allow demo --port '*'
run "$LNK" agent show demo --permissions

package agentlife

import (
	"os"

	"lnk.dev/lnk/internal/ownerdir"
)

// stateDir opens ~/.lnk/agents/<agent id>, made 0700 where missing.
func stateDir(home, id string) (*os.File, error) {
	return ownerdir.Open(home, ".lnk", "agents", id)
}

// agentsDir opens ~/.lnk/agents.
func agentsDir(home string) (*os.File, error) {
	return ownerdir.Open(home, ".lnk", "agents")
}

// logsDir opens ~/.lnk/agents/<agent>/logs.
func logsDir(home, name string) (*os.File, error) {
	return ownerdir.Open(home, ".lnk", "agents", name, "logs")
}

package cli

import "github.com/spf13/cobra"

// groups are the first-level command groups, in the spec's words. A part
// registers its commands under one of these names; a group with none is
// not listed (TestNoEmptyGroup): the MCP tools are `lnk sandbox tool`.
var groups = []struct{ name, short string }{
	{"agent", "Make, start, stop, list, delete agents and change what they may do"},
	{"sandbox", "Run commands confined to an agent's grants, check the sandbox, read its log"},
	{"secret", "Keep secrets outside every sandbox and grant them to agents"},
	{"key", "Seal and open streams for moves and backups"},
	{"bucket", "Push an agent's files folder and backups to its buckets, and pull a backup back"},
	{"kernel", "The per-owner core that holds every handle"},
	{"ask", "Questions waiting for the owner"},
	{"machine", "This machine's ID, name and what it allows every agent"},
	{"model", "Models on this machine: Link's built-in model, and those its loopback serves"},
}

// groupPreRun is run before every command of a group (its
// PersistentPreRunE), set from the file of the part that needs it: the
// agent group's keeps ~/Link/History (agent_history.go). A subcommand
// that sets a PersistentPreRunE of its own replaces it (cobra runs the
// nearest), so none in those groups does.
var groupPreRun = map[string]func(*cobra.Command, []string) error{}

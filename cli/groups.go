package cli

// groups are the first-level command groups, in the spec's words. A part
// registers its commands under one of these names; a group with none is
// not listed (TestNoEmptyGroup): the MCP tools are `lnk sandbox tool`.
var groups = []struct{ name, short string }{
	{"agent", "Make, start, stop, list, delete agents and change what they may do"},
	{"sandbox", "Run commands confined to an agent's grants, check the sandbox, read its log"},
	{"secret", "Keep secrets outside every sandbox and grant them to agents"},
	{"key", "Seal and open streams for moves and backups"},
	{"kernel", "The per-owner core that holds every handle"},
	{"ask", "Questions waiting for the owner"},
}

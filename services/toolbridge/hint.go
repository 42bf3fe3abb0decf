package toolbridge

// grantHint is the lnk command that grants tool, and with call its call
// by name, to the sandbox a refusal is for: lnk agent allow for an
// agent's, and for a plain sandbox, which no agent's grants hold, the
// --tool and --allow flags of lnk sandbox run.
func grantHint(agent, tool, call string) string {
	if agent == "" {
		h := "lnk sandbox run --tool " + tool
		if call != "" {
			h += " --allow " + call
		}
		return h + " -- COMMAND"
	}
	h := "lnk agent allow " + agent + " --tool " + tool
	if call != "" {
		h += " --allow " + call
	}
	return h
}

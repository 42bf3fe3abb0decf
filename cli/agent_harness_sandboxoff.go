package cli

import "lnk.dev/lnk/caps"

// sandboxOff is agent a's no-sandbox setting (lnk agent start
// --no-sandbox, kept until --sandbox): the one place lnk agent harness
// run and check learn it.
func sandboxOff(a *caps.Agent) bool { return a.NoSandbox }

// onOff says a setting as lnk agent show does.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off (no-sandbox: the harness runs unconfined)"
}

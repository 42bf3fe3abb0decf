package cli

// onOff says a setting as lnk agent show does.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off (no-sandbox: the harness runs unconfined)"
}

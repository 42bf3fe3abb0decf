package sandbox

import "testing"

// TestEnvTakesLNKPortAsANumberOnly: the agent's first port reaches the
// sandbox from lnk's environment only as a port number; anything else
// the owner's environment holds under that name stays out.
func TestEnvTakesLNKPortAsANumberOnly(t *testing.T) {
	for v, want := range map[string]bool{"20000": true, "1": true, "65535": true, "0": false, "65536": false, "020000": false, "20000 x": false, "$(id)": false, "": false} {
		t.Setenv("LNK_PORT", v)
		got, ok := Env("/home/x", 0)["LNK_PORT"]
		if ok != want || (ok && got != v) {
			t.Errorf("LNK_PORT=%q: in the sandbox %v (%q), want %v", v, ok, got, want)
		}
	}
}

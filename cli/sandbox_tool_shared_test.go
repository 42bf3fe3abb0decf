package cli

import (
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// tool add --shared says plainly that sessions share one server and what
// it keeps, and the definition keeps it.
func TestToolAddSharedWarnsAndKeepsIt(t *testing.T) {
	lnkBin(t) // built before HOME moves
	home := testenv.Home(t)
	out, errOut, code := lnkRun(t, nil, "sandbox", "tool", "add", "notes", "--shared", "--", "/bin/true")
	if code != 0 || !strings.Contains(out, "shares whatever it keeps between calls") {
		t.Fatalf("tool add --shared: %d %q %q", code, out, errOut)
	}
	d, err := tooldef.Store{Home: home}.Load("notes")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Destroy()
	if !d.Shared {
		t.Error("the definition is not shared")
	}
	if out, _, _ := lnkRun(t, nil, "sandbox", "tool", "list", "--json"); !strings.Contains(out, `"shared": true`) {
		t.Errorf("tool list: %s", out)
	}
}

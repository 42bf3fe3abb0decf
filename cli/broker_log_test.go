package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/testenv"
)

// A broker's line reaches the audit log (the control); where the log
// can't be opened (~/.lnk loose), it reaches lnk's stderr with the
// reason, never nowhere.
func TestBrokerLogNeverDropsALine(t *testing.T) {
	home := testenv.Home(t)
	entry := func(line string) audit.Entry { return audit.Entry{Kind: audit.KindQuestion, Agent: "a", Reason: line} }
	if err := os.MkdirAll(filepath.Join(home, ".lnk"), 0o700); err != nil {
		t.Fatal(err)
	}
	var fallback bytes.Buffer
	copyBrokerLog(strings.NewReader("lnk-askbroker: asked q1\n"), home, "lnk-askbroker: ", entry, &fallback)
	if fallback.Len() != 0 {
		t.Fatalf("with the audit log open, lnk's stderr got: %s", fallback.String())
	}
	logged, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil || !strings.Contains(string(logged), "asked q1") {
		t.Fatalf("the audit log after a broker's line: %v\n%s", err, logged)
	}
	if err := os.Chmod(filepath.Join(home, ".lnk"), 0o777); err != nil {
		t.Fatal(err)
	}
	copyBrokerLog(strings.NewReader("lnk-askbroker: asked q2\n"), home, "lnk-askbroker: ", entry, &fallback)
	if got := fallback.String(); !strings.Contains(got, "not in the audit log") || !strings.Contains(got, "lnk-askbroker: asked q2") {
		t.Fatalf("with ~/.lnk loose, lnk's stderr got %q, want the line and why", got)
	}
}

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// The proxy's events go to the wire's log as use and refuse lines, with
// their status and bytes each way; what else it says goes to lnk's stderr.
func TestProxyLogGoesToTheAuditLog(t *testing.T) {
	home := testenv.Home(t)
	os.Mkdir(filepath.Join(home, ".lnk"), 0o700)
	in := `{"time":"2026-11-30T00:00:00Z","kind":"connect","host":"api.example.com","port":443,"decision":"allow","bytes_up":1,"bytes_down":2}
{"time":"2026-11-30T00:00:00Z","kind":"http","host":"169.254.169.254","port":80,"decision":"refuse","rule":"address","reason":"a cloud metadata address","status":403}
lnk-netbroker: a message that is not an event
`
	var errw strings.Builder
	copyProxyLog(strings.NewReader(in), home, "ada", &errw)
	if errw.String() != "lnk-netbroker: a message that is not an event\n" {
		t.Errorf("lnk's stderr got %q", errw.String())
	}
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{
		`"kind":"use","agent":"ada","request":"net connect","route":"api.example.com:443","bytes_up":1,"bytes_down":2}`,
		`"kind":"refuse","agent":"ada","request":"net http","route":"169.254.169.254:80","reason":"address: a cloud metadata address","status":403}`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the audit log lacks %s:\n%s", want, log)
		}
	}
}

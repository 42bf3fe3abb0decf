package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/agentlife"
)

// TestStatusLastEndCleaned: the supervisor's record quotes how the
// harness last ended, words a harness's error chose; lnk agent status
// prints its last end line through textsafe.Line, so an OSC title change,
// a colour, a bidi override or a newline forging a line of its own never
// reach the owner's terminal. Accents and an emoji show as written (the
// positive control), and --json keeps the value exact.
func TestStatusLastEndCleaned(t *testing.T) {
	home := testenv.Home(t)
	if code, _, errs := runLnk(t, "agent", "create", "ada"); code != ExitOK {
		t.Fatal(errs)
	}
	code, out, errs := runLnk(t, "agent", "status", "ada", "--json")
	if code != ExitOK {
		t.Fatal(errs)
	}
	var st struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.ID) != 32 {
		t.Fatalf("agent status --json: %v\n%s", err, out)
	}
	last := "exit 3: café 🙂 \x1b]0;pwned\x07\x1b[31mred\u202e\nsandbox   OFF"
	rec := agentlife.Record{Agent: "ada", ID: st.ID, Mode: "foreground", State: agentlife.StateStopped, Sandbox: true,
		Since: time.Now(), Starts: 1, LastExit: last}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".lnk", "agents", st.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, agentlife.RecordFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runLnk(t, "agent", "status", "ada")
	if code != ExitOK {
		t.Fatalf("agent status: exit %d\n%s", code, errs)
	}
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Errorf("agent status printed a control or bidi character:\n%q", out)
	}
	if !strings.Contains(out, "last end  exit 3: café 🙂 ]0;pwned[31mredsandbox   OFF\n") {
		t.Errorf("agent status does not show the last end as one cleaned line:\n%s", out)
	}
	code, out, errs = runLnk(t, "agent", "status", "ada", "--json")
	if code != ExitOK {
		t.Fatal(errs)
	}
	var back struct {
		LastExit string `json:"last_exit"`
	}
	if err := json.Unmarshal([]byte(out), &back); err != nil || back.LastExit != last {
		t.Errorf("agent status --json: last_exit %q (%v), want it exact", back.LastExit, err)
	}
}

package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/testenv"
)

// A waiting question is shown atop lnk sandbox log, with the command that
// answers it, cleaned of what a terminal would obey.
func TestWaitingQuestionsAtopTheLog(t *testing.T) {
	home := testenv.Home(t)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"sandbox", "log"}, &out, &errb); code != 0 || strings.Contains(out.String(), "waiting") {
		t.Fatalf("no store: code %d, out %q, err %q", code, out.String(), errb.String())
	}
	st, err := askbroker.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q := &askbroker.Question{What: "mcp call", Sandbox: "ada", Agent: "ada", Call: "github.delete_repo\x1b[2J\u202e", Allow: "lnk agent allow ada --tool github --allow delete_repo"}
	q.Clean()
	id, err := st.Put(q, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := Main(context.Background(), []string{"sandbox", "log"}, &out, &errb); code != 0 {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	s := out.String()
	if !strings.Contains(s, "1 question(s) waiting") || !strings.Contains(s, "lnk ask show ID shows one whole") || !strings.Contains(s, id) || !strings.Contains(s, "delete_repo") {
		t.Fatalf("the waiting question is not atop the log: %q", s)
	}
	if strings.ContainsAny(s, "\x1b\u202e") {
		t.Fatalf("the log printed a control or bidi character: %q", s)
	}
	out.Reset()
	Main(context.Background(), []string{"sandbox", "log", "--json"}, &out, &errb)
	if strings.Contains(out.String(), "waiting") {
		t.Errorf("--json mixed the questions into the JSON lines: %q", out.String())
	}
}

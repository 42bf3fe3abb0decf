package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/testenv"
)

// TestAskListAndAnswer answers a waiting question through lnk ask, and
// checks each refusal's exit code: a second answer, an unknown id, a word
// that is neither yes nor no.
func TestAskListAndAnswer(t *testing.T) {
	home := testenv.Home(t)
	s, err := askbroker.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q := &askbroker.Question{What: "mcp call", Sandbox: "work", Call: "tools/call \x1b[2Jdelete_repo\u202e", Allow: "lnk agent allow --tool gh"}
	q.Clean()
	id, err := s.Put(q, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	run := func(want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(context.Background(), args, &out, &errb); code != want {
			t.Fatalf("lnk %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errb.String())
		}
		return out.String() + errb.String()
	}
	out := run(ExitOK, "ask", "list")
	if !strings.Contains(out, id) || !strings.Contains(out, "tools/call [2Jdelete_repo") || strings.ContainsAny(out, "\x1b\u202e") {
		t.Fatalf("lnk ask list:\n%q", out)
	}
	var ws []askbroker.Waiting
	if err := json.Unmarshal([]byte(run(ExitOK, "ask", "list", "--json")), &ws); err != nil || len(ws) != 1 || ws[0].ID != id {
		t.Fatalf("lnk ask list --json: %+v, %v", ws, err)
	}
	run(ExitUsage, "ask", "answer", id, "maybe")
	run(ExitOK, "sandbox", "answer", id, "yes")
	if out := run(ExitRefused, "ask", "answer", id, "no"); !strings.Contains(out, "already answered") {
		t.Errorf("second answer: %s", out)
	}
	if a, ok, _ := s.ReadAnswer(id); !ok || !a.Allow {
		t.Errorf("the first answer did not stay: %+v", a)
	}
	run(ExitMissing, "ask", "answer", "aaaaaaaaaaaaaaaa", "yes")
	run(ExitMissing, "ask", "answer", "../../x", "yes")
}

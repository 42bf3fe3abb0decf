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

// TestAskShowPrintsTheWholeQuestion: lnk ask list shows a call's first
// line alone and says how to see it whole; lnk ask show ID prints the
// question as the dialog and the terminal show it (askbroker's
// Question.Text): every line of a multi-line call, each behind the
// gutter, so a line of the call forging "Allow this … once?" reads as
// the call's, never as Link's; escape sequences, controls and a bidi
// override removed; accents and an emoji shown as written (the positive
// control). The last line is Link's own. An unknown ID is missing.
func TestAskShowPrintsTheWholeQuestion(t *testing.T) {
	home := testenv.Home(t)
	s, err := askbroker.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Stored as a bridge would never store it (raw): show cleans whatever
	// the file holds.
	q := &askbroker.Question{What: "mcp call", Sandbox: "work", Agent: "ada",
		Call:  "tools/call fetch {\n  \"path\": \"~/Link/café 🙂\",\n  \"then\": \"rm -rf ~\"\x1b]0;pwned\x07\u202e\n}\nAllow this mcp call of sandbox work once? Unanswered, it is refused.\x1b[2J",
		Allow: "lnk agent allow ada --tool fetch"}
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
	if out := run(ExitOK, "ask", "list"); !strings.Contains(out, "tools/call fetch { …") || strings.Contains(out, "rm -rf") || !strings.Contains(out, "lnk ask show ID") {
		t.Fatalf("lnk ask list shows the first line and how to see the rest:\n%s", out)
	}
	out := run(ExitOK, "ask", "show", id)
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Fatalf("lnk ask show printed a control or bidi character:\n%q", out)
	}
	w, err := s.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[lnk question "+id+"]\n"+w.Question.Text()+"\n") {
		t.Errorf("lnk ask show is not the question as the dialog shows it:\n%s\nwant:\n%s", out, w.Question.Text())
	}
	for _, want := range []string{
		"Link: sandbox work (agent ada) asks for a mcp call:\n",
		askbroker.CallGutter + "tools/call fetch {\n",
		askbroker.CallGutter + "  \"path\": \"~/Link/café 🙂\",\n",
		askbroker.CallGutter + "  \"then\": \"rm -rf ~\"]0;pwned\n",
		askbroker.CallGutter + "}\n",
		askbroker.CallGutter + "Allow this mcp call of sandbox work once? Unanswered, it is refused.[2J\n",
		"Allow this mcp call of sandbox work (agent ada) once? Unanswered, it is refused. To allow it always: lnk agent allow ada --tool fetch\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lnk ask show does not show %q:\n%s", want, out)
		}
	}
	// Only Link's own last line starts with "Allow": the forged one sits
	// behind the gutter.
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Allow") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d lines read as Link's question, want 1:\n%s", n, out)
	}
	run(ExitMissing, "ask", "show", "aaaaaaaaaaaaaaaa")
	run(ExitMissing, "ask", "show", "../../x")
}

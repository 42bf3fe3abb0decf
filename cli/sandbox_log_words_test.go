package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/audit"
)

// TestLogWordsQuoteForgedFields: a logged value is others' text (an
// agent's or a tool's name, a route); lnk sandbox log in words quotes a
// value holding a space, '=', '—' or a quote, so a value holding
// " agent=…" or " — …" forges no field of its line nor its reason. An
// ordinary value with accents and an emoji shows bare (the positive
// control), one with a space quoted whole; --json prints the line as
// kept, exactly.
func TestLogWordsQuoteForgedFields(t *testing.T) {
	line := func(e audit.Entry) []byte {
		e.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	words := func(l []byte) string {
		var b bytes.Buffer
		printLogLine(&b, l, false)
		s := b.String()
		_, rest, ok := strings.Cut(s, " ")
		_, rest, ok2 := strings.Cut(rest, " ") // after the date and the time
		if !ok || !ok2 {
			t.Fatalf("no time in %q", s)
		}
		return rest
	}
	for _, c := range []struct {
		e    audit.Entry
		want string
	}{
		{audit.Entry{Kind: "refuse", Agent: "eve agent=ada — allowed", Request: "mcp", Route: `x" rights="rw`, Reason: "not granted"},
			`refuse   agent="eve agent=ada — allowed" request=mcp route="x\" rights=\"rw" — not granted` + "\n"},
		{audit.Entry{Kind: "grant", Agent: "chloé🙂", Request: "open", Route: "~/Link/Zoë 🙂", Reason: "réussi 🙂"},
			`grant    agent=chloé🙂 request=open route="~/Link/Zoë 🙂" — réussi 🙂` + "\n"},
		{audit.Entry{Kind: "refuse", Agent: "a=b", Cap: "c\u00a0d"},
			`refuse   agent="a=b" cap="c\u00a0d"` + "\n"},
	} {
		l := line(c.e)
		if got := words(l); got != c.want {
			t.Errorf("words:\n got %q\nwant %q", got, c.want)
		}
		var b bytes.Buffer
		printLogLine(&b, l, true)
		if b.String() != string(l)+"\n" {
			t.Errorf("--json: %q, want the line as kept %q", b.String(), l)
		}
	}
}

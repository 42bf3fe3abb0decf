package cli

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/services/move"
)

// TestPrintReceivedCleansTheStreamsText: what a receive left out is
// named by the stream another machine sent (its grants, its buckets), so
// it prints through textsafe: no bidi override turning a path around, no
// zero-width character, no escape sequence; accents and emoji show as
// written (the positive control). The other machine's own output, shown
// after a move over ssh, is cleaned the same way, its lines kept.
func TestPrintReceivedCleansTheStreamsText(t *testing.T) {
	var out bytes.Buffer
	c := &cobra.Command{}
	c.SetOut(&out)
	printReceived(c, &move.Received{ID: "0123", Name: "pal", New: true, Placed: []string{"Home"},
		Allow:   []string{"--file ~/Link/r\u202etxt.exe\u200b", "--file ~/Link/café 🙂"},
		Buckets: []string{"\x1b]52;c;cm0gLXJm\x07b2 (lnk agent bucket add pal b2)"}}, false)
	want := "agent pal (id 0123) arrived: Home put in place\n" +
		"  left out: lnk agent allow pal --file ~/Link/rtxt.exe\n" +
		"  left out: lnk agent allow pal --file ~/Link/café 🙂\n" +
		"  left out, ]52;c;cm0gLXJmb2 (lnk agent bucket add pal b2)\n" +
		"lnk agent start pal runs it here\n"
	if out.String() != want {
		t.Fatalf("printed\n%q\nwant\n%q", out.String(), want)
	}
	if got, want := textLines("placed\u202e Home\x1b[2J\n\tcafé 🙂\n"), "placed Home\n\tcafé 🙂\n"; got != want {
		t.Fatalf("the other machine's output shown as %q, want %q", got, want)
	}
}

package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/kernel"
)

// TestEveryRefusalRendersOneWay: a refusal made by caps, the kernel, a
// broker or the command itself prints as one "lnk: refused: <reason>"
// line, then its hint, and keeps its exit code; an error that is no
// refusal prints as it always did (the positive control).
func TestEveryRefusalRendersOneWay(t *testing.T) {
	_, capErr := kernel.NewCapTable().Lookup(kernel.Handle{1}, "main")
	_, pathErr := caps.GrantPath("/home/u", "/home/u/Link", "a/../b")
	for _, tc := range []struct {
		name  string
		err   error
		code  int
		first string
		hint  string
	}{
		{"caps rule", fmt.Errorf("agent demo: %w", caps.ErrDotFolder), ExitRefused, "lnk: refused: agent demo: " + caps.ErrDotFolder.Reason, ""},
		{"caps path", pathErr, ExitRefused, "lnk: refused: a/../b: ", ""},
		{"kernel capability", capErr, ExitRefused, "lnk: refused: capability 01000000: no such capability", ""},
		{"proxy", &netbroker.Refusal{Status: 403, Refusal: refusal.Refusal{Rule: netbroker.KindHost, Reason: "example.com is not granted", Hint: "lnk agent allow demo --internet-host example.com"}},
			ExitRefused, "lnk: refused: example.com is not granted", "lnk agent allow demo --internet-host example.com"},
		{"secrets", secrets.ErrExists, ExitRefused, "lnk: refused: a secret of that name exists", ""},
		{"no rule", &refusal.Refusal{Reason: "the fd is not a socket"}, ExitFailure, "lnk: refused: the fd is not a socket", ""},
		{"the command's own", Refused(errors.New("agent main holds sealed secrets"), "lnk agent deny main --network-mode host"), ExitRefused,
			"lnk: refused: agent main holds sealed secrets", "lnk agent deny main --network-mode host"},
		{"not a refusal", errors.New("disk full"), ExitFailure, "lnk: disk full", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error to render")
			}
			lines := strings.Split(strings.TrimSuffix(Render(tc.err), "\n"), "\n")
			if !strings.HasPrefix(lines[0], tc.first) || strings.Contains(lines[0], "refused: refused") {
				t.Errorf("first line %q, want it to begin %q", lines[0], tc.first)
			}
			if tc.name == "not a refusal" && strings.Contains(lines[0], "refused") {
				t.Errorf("an error that is no refusal reads %q", lines[0])
			}
			var hints []string
			for _, l := range lines[1:] {
				h, ok := strings.CutPrefix(l, "  hint: ")
				if !ok {
					t.Errorf("line %q is neither the reason nor a hint", l)
				}
				hints = append(hints, h)
			}
			if tc.hint != "" && (len(hints) != 1 || hints[0] != tc.hint) {
				t.Errorf("hints %q, want %q", hints, tc.hint)
			}
			if code := CodeOf(tc.err); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
		})
	}
}

// TestRenderCleansWhatTheErrorCarries: an error's text often names what
// an agent or a tool made (a file name in a refusal, a harness's or a
// peer's reason), so Render prints it and its hints through textsafe: no
// escape (an OSC 8 link, an OSC 52 clipboard write, a CSI), no bidi
// override or zero-width character, no newline forging a second "lnk:"
// line reaches the owner's terminal; accents and emoji show as written
// (the positive control).
func TestRenderCleansWhatTheErrorCarries(t *testing.T) {
	name := "r\x1b]8;;http://127.0.0.1/\x07eport\x1b]8;;\x07\x1b]52;c;cm0gLXJm\x07\u202etxt.exe\u200b\r\nlnk: refused: forged"
	err := Refused(fmt.Errorf("open %s: permission denied", name), "lnk agent allow demo --file \x1b[31m"+name)
	got := Render(err)
	shown := "r]8;;http://127.0.0.1/eport]8;;]52;c;cm0gLXJmtxt.exe lnk: refused: forged"
	want := "lnk: refused: open " + shown + ": permission denied\n" +
		"  hint: lnk agent allow demo --file [31m" + shown + "\n"
	if got != want {
		t.Fatalf("Render printed\n%q\nwant\n%q", got, want)
	}
	plain := Refused(errors.New("open ~/Link/café/résumé 🙂.pdf: permission denied"), "lnk agent allow demo --file ~/Link/café")
	if got, want := Render(plain), "lnk: refused: open ~/Link/café/résumé 🙂.pdf: permission denied\n  hint: lnk agent allow demo --file ~/Link/café\n"; got != want {
		t.Fatalf("Render changed ordinary text:\n%q\nwant\n%q", got, want)
	}
}

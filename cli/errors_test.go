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

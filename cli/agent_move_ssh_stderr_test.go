package cli

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestMoveSSHStderrCleaned: what the other machine writes to stderr
// during lnk agent move --ssh is its text; sendOverSSH passes it through
// textsafe.Stream, so a real child writing an OSC title change, a colour
// and a bidi override to stderr reaches the owner's stderr as none of
// them, while accents and an emoji show as written (the positive
// control). The child sends no key, so nothing is sent.
func TestMoveSSHStderrCleaned(t *testing.T) {
	home := testenv.Home(t)
	var errs bytes.Buffer
	c := &cobra.Command{}
	c.SetErr(&errs)
	c.SetOut(&bytes.Buffer{})
	rc := exec.Command("sh", "-c", `printf 'café 🙂 \033]0;pwned\007\033[31mred\342\200\256x\n' >&2; exit 1`)
	if _, err := sendOverSSH(context.Background(), c, home, &caps.Agent{Name: "ada"}, rc); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Fatalf("sendOverSSH with no key: %v", err)
	}
	got := errs.String()
	if strings.ContainsAny(got, "\x1b\x07\u202e") {
		t.Errorf("the remote's stderr reached the terminal with a control or bidi character:\n%q", got)
	}
	if !strings.Contains(got, "café 🙂 redx\n") {
		t.Errorf("the remote's stderr does not show as cleaned text:\n%q", got)
	}
}

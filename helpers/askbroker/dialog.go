package askbroker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"lnk.dev/lnk/internal/textsafe"
)

// SystemDirs are the only folders a dialog or notification program is
// taken from — never PATH, which can name a folder a sandbox writes.
var SystemDirs = []string{"/usr/bin", "/bin", "/usr/local/bin"}

// DesktopVars are the desktop session's variables a dialog is given, and
// the only ones.
var DesktopVars = []string{"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "HOME", "LANG"}

// FindSystemProgram returns the path of name in [SystemDirs]: a regular,
// executable file owned by root and writable by no one else.
func FindSystemProgram(name string) (string, bool) {
	for _, d := range SystemDirs {
		p := filepath.Join(d, name)
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 || st.Mode().Perm()&0o022 != 0 {
			continue
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); !ok || sys.Uid != 0 {
			continue
		}
		return p, true
	}
	return "", false
}

// A Dialog asks on the desktop with zenity (--no-markup) or kdialog (the
// text escaped). Answered another way first, its program is killed, which
// closes it; a click after then is no answer.
type Dialog struct {
	prog string
	kind string // "zenity" or "kdialog"
	env  []string
}

// FindDialog returns a dialog for the desktop session env describes (as
// KEY=value lines, the broker's own environment or one the kernel passed),
// or nil where there is no display or no dialog program.
func FindDialog(env []string) *Dialog {
	var keep []string
	display := false
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		for _, want := range DesktopVars {
			if k == want && v != "" {
				keep = append(keep, kv)
				display = display || k == "DISPLAY" || k == "WAYLAND_DISPLAY"
			}
		}
	}
	if !display {
		return nil
	}
	keep = append(keep, "PATH=/usr/bin:/bin")
	for _, kind := range []string{"zenity", "kdialog"} {
		if p, ok := FindSystemProgram(kind); ok {
			return &Dialog{prog: p, kind: kind, env: keep}
		}
	}
	return nil
}

// Program is the dialog program's path; empty for no dialog.
func (d *Dialog) Program() string {
	if d == nil {
		return ""
	}
	return d.prog
}

// Available reports whether d can show a question.
func (d *Dialog) Available() bool { return d != nil }

// Way names the dialog in answers and logs.
func (d *Dialog) Way() string { return "dialog" }

// ErrDialogFailed is a dialog that showed nothing or ended without an answer.
var ErrDialogFailed = errors.New("the dialog gave no answer")

func (d *Dialog) args(a *Asked) []string {
	text := a.Question.Text() + "\n\n(question " + a.ID + ")"
	if d.kind == "kdialog" {
		return []string{"--title", "Link asks", "--yes-label", "Allow once", "--no-label", "Refuse",
			"--yesno", EscapeMarkup(text)}
	}
	// --default-cancel: a key typed into the dialog as it takes the
	// focus (Return, a space) refuses, never allows; Allow once is
	// pressed on purpose.
	return []string{"--question", "--no-markup", "--default-cancel", "--title=Link asks", "--width=640",
		"--ok-label=Allow once", "--cancel-label=Refuse", "--text=" + text}
}

// Ask shows the dialog and waits for a click, or for ctx to end, which
// kills the dialog's program and waits for it.
func (d *Dialog) Ask(ctx context.Context, a *Asked) (bool, error) {
	cmd := exec.Command(d.prog, d.args(a)...)
	cmd.Env = d.env
	cmd.Dir = "/"
	var stderr tail
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("%w: %v", ErrDialogFailed, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ex *exec.ExitError
		switch {
		case err == nil:
			return true, nil
		case errors.As(err, &ex) && ex.ExitCode() == 1 && !stderr.cannotShow():
			return false, nil
		default:
			return false, fmt.Errorf("%w: %v: %s", ErrDialogFailed, err, stderr.String())
		}
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		return false, context.Cause(ctx)
	}
}

// tail keeps the last 2 KiB a dialog wrote on its standard error, so a
// dialog that could not show (zenity then exits 1, as for Refuse) is told
// from a refusal, and its reason reaches the log.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = t.b[len(t.b)-2048:]
	}
	return len(p), nil
}

func (t *tail) String() string { return strings.Join(strings.Fields(textsafe.Line(string(t.b))), " ") }

func (t *tail) cannotShow() bool {
	s := strings.ToLower(string(t.b))
	return strings.Contains(s, "cannot open display") || strings.Contains(s, "failed to open display") || strings.Contains(s, "cannot connect to x server")
}

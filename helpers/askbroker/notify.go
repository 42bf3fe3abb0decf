package askbroker

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// A Notifier tells the owner's desktop that a question waits in the
// store, where no dialog shows. It answers nothing: the owner answers
// with lnk ask answer. notify-send is taken from [SystemDirs] only, and
// the body is escaped, since notification servers read markup there.
type Notifier struct {
	prog string
	env  []string
}

// FindNotifier returns a notifier for the desktop session env describes,
// or nil where there is no D-Bus session or no notify-send.
func FindNotifier(env []string) *Notifier {
	var keep []string
	bus := false
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		for _, want := range DesktopVars {
			if k == want && v != "" {
				keep = append(keep, kv)
				bus = bus || k == "DBUS_SESSION_BUS_ADDRESS"
			}
		}
	}
	p, ok := FindSystemProgram("notify-send")
	if !bus || !ok {
		return nil
	}
	return &Notifier{prog: p, env: append(keep, "PATH=/usr/bin:/bin")}
}

// Program is notify-send's path; empty for no notifier.
func (n *Notifier) Program() string {
	if n == nil {
		return ""
	}
	return n.prog
}

// notifyText is the notification's summary and (escaped) body.
func notifyText(a *Asked) (summary, body string) {
	q := a.Question
	call, _, more := strings.Cut(q.Call, "\n")
	if utf8.RuneCountInString(call) > 200 {
		call, more = string([]rune(call)[:200]), true
	}
	if more || q.Cut {
		call += " …"
	}
	who := "sandbox " + q.Sandbox
	if q.Agent != "" {
		who += " (agent " + q.Agent + ")"
	}
	// The body shows a call's first line alone: it names the command
	// that shows the question whole before it is answered.
	body = fmt.Sprintf("%s asks for a %s: %s\nlnk ask show %s shows it whole; lnk ask answer %s yes|no", who, q.What, call, a.ID, a.ID)
	return "Link: a question is waiting", EscapeMarkup(body)
}

// Notify shows the notification; it gives notify-send ten seconds, and
// stops it when ctx ends.
func (n *Notifier) Notify(ctx context.Context, a *Asked) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	summary, body := notifyText(a)
	cmd := exec.CommandContext(ctx, n.prog, "--app-name=Link", "--urgency=critical", "--", summary, body)
	cmd.Env = n.env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	return cmd.Run()
}

package agentlife

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/webhook"
)

// webhookPort is the port agent a's webhook listener takes posts on, 0
// when it has no webhook (or runs another harness than Link Harness,
// which lnk agent webhook add refuses). A webhooks.json that can't be
// read is an error: the agent does not start without the listener its
// settings name.
func webhookPort(home string, a *caps.Agent) (int, error) {
	if !a.RunsLinkHarness() {
		return 0, nil
	}
	s, err := (webhook.Agent{Home: home, Name: a.Name, ID: a.ID, Owner: a.Owner}).Load()
	if err != nil {
		return 0, fmt.Errorf("agent %s's webhooks: %w", a.Name, err)
	}
	if len(s.Hooks) == 0 {
		return 0, nil
	}
	return s.Port, nil
}

// hookListener is the agent's webhook listener (lnk agent webhook serve)
// while its harness runs: in the harness's process group, so that
// whatever ends the group ends it, its output in the harness's log.
type hookListener struct {
	stop chan struct{}
	done chan struct{}
}

// startHooks runs `lnk agent webhook serve` for the agent in group pgid,
// writing to out (a descriptor of its own), started again after each
// failure (1 s, doubling to 1 minute) until stopped.
func startHooks(lnk, agent string, pgid int, out *os.File) *hookListener {
	l := &hookListener{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		// PR_SET_PDEATHSIG follows the thread that started the child:
		// every start comes from this one, kept until the last
		// listener is reaped, so only the supervisor's death sends it.
		runtime.LockOSThread()
		defer close(l.done)
		defer out.Close()
		backoff := firstBackoff
		for {
			how := l.run(lnk, agent, pgid, out)
			if how == "" {
				return
			}
			fmt.Fprintf(out, "lnk: the webhook listener %s; starting it again in %s\n", how, backoff)
			select {
			case <-l.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}()
	return l
}

// run runs the listener once: "" when it was stopped, else how it ended.
func (l *hookListener) run(lnk, agent string, pgid int, out *os.File) string {
	cmd := exec.Command(lnk, "agent", "webhook", "serve", agent)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true, Pgid: pgid, Pdeathsig: unix.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "did not start: " + err.Error()
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return "ended: " + fmt.Sprint(err)
	case <-l.stop:
		cmd.Process.Signal(unix.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopGrace):
			cmd.Process.Kill()
			<-exited
		}
		return ""
	}
}

// end stops the listener and waits for it; nil does nothing.
func (l *hookListener) end() {
	if l == nil {
		return
	}
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

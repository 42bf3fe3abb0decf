package cli

import (
	"os"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/askbroker/askproc"
	"lnk.dev/lnk/internal/audit"
)

// startAsking starts the confined lnk-askbroker (beside lnk) that asks
// the owner for this run's bridge, every way there is at once: the store
// (lnk ask answer), the terminal the owner ran lnk in (its controlling
// terminal, /dev/tty), and where lnk runs on a desktop a dialog, or a
// notification where no dialog shows (its launcher holds the desktop's
// variables). Its log lines become the audit log's question lines; done
// closes once the last is written.
func startAsking(comp *caps.Compiled, wait time.Duration, degraded bool) (*askproc.Procs, chan struct{}, error) {
	askbroker, err := besideLnk("lnk-askbroker")
	if err != nil {
		return nil, nil, err
	}
	tty := askproc.OpenTerminal() // nil without one: asked the other ways
	if tty != nil {
		defer tty.Close() // the broker holds its own copy
	}
	logw, done, err := askLog(comp)
	if err != nil {
		return nil, nil, err
	}
	defer logw.Close() // the broker and its launcher hold their own
	p, err := askproc.Start(askproc.Options{Bin: askbroker, Home: comp.Home,
		Terminal: tty, Desktop: os.Environ(), Wait: wait, Degraded: degraded, Log: logw})
	if err != nil {
		return nil, nil, err
	}
	return p, done, nil
}

// askLog is the ask broker's stderr: each line it says (a question, its
// answer, a refusal with its reason; never a terminal's code) becomes a
// question line of the audit log.
func askLog(comp *caps.Compiled) (*os.File, chan struct{}, error) {
	return brokerLog(comp, "lnk-askbroker: ", func(line string) audit.Entry {
		return audit.Entry{Kind: audit.KindQuestion, Agent: comp.LogName(), Reason: line}
	})
}

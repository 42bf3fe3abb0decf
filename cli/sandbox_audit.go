package cli

import (
	"fmt"
	"os"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/services/sandboxrun"
)

// What lnk sandbox run and check refuse (a spec or grant a rule refused,
// a command not in [commands], a folder that changed, a machine without
// landlock, seccomp or bubblewrap), and each start that runs with less
// (--degraded, the host's network), goes to the wire's log (~/.lnk/log)
// once, with its reason, beside the proxy's lines (proxy_log.go). The
// owner still sees it on stderr; the log is what stays.

// auditRefusal logs err when it is a refusal (exit 3 or 5) and returns
// it unchanged.
func auditRefusal(request, agent string, err error) error {
	if err == nil {
		return nil
	}
	if code := CodeOf(err); code != ExitRefused && code != ExitNoSandbox {
		return err
	}
	reason := err.Error()
	if rule := ruleOf(err); rule != "" {
		reason = rule + ": " + reason
	}
	writeSandboxAudit(audit.Entry{Kind: audit.KindRefuse, Agent: agent, Request: request, Reason: reason})
	return err
}

// auditNotices logs what a start says it runs without, one line each.
func auditNotices(request, agent string, notices []string) {
	var es []audit.Entry
	for _, n := range notices {
		es = append(es, audit.Entry{Kind: audit.KindWarn, Agent: agent, Request: request, Reason: n})
	}
	writeSandboxAudit(es...)
}

// writeSandboxAudit appends es to ~/.lnk/log/audit.log (folders made 0700
// where missing, never through a link). A log it cannot write is said on
// stderr: the refusal itself stands either way.
func writeSandboxAudit(es ...audit.Entry) {
	if len(es) == 0 {
		return
	}
	err := sandboxrun.Audit(os.Getenv("HOME"), es...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lnk: could not write the audit log: %v\n", err)
	}
}

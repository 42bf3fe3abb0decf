package sandboxrun

import (
	"context"
	"errors"
	"io"
	"os"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// Options are one run of a command in an agent's sandbox.
type Options struct {
	// Client is the kernel's connection: the run owns it from here.
	Client *client.Client
	// Comp is the caller's compile of the agent's grants; the kernel
	// compiles its own, and the two must agree.
	Comp    *caps.Compiled
	Agent   string
	Harness Harness
	// Grants, set, makes the run a start of no agent (Agent empty):
	// flag grants or a sandbox file, compiled again by the kernel.
	Grants *proto.RunGrants
	// Request and LogName are how the run's own refusals and notices
	// are logged ("sandbox run", the agent or <agent>/<harness>-run).
	Request, LogName string
	Argv             []string
	Dir              string // the working folder (absolute); "": the files folder
	InitPath         string // lnk-init, checked present
	Degraded         bool
	Stdin            io.Reader // nil: /dev/null
	Stdout, Stderr   io.Writer
	Status           func(sandbox.Status) // nil: none (--json-status)
	// ExtraExec are programs bound in read-only and executable, each
	// file alone (Link Harness's lnk-harness).
	ExtraExec []string
	// Bridge, if set, starts the run's tool bridge once the start's
	// brokers are ready (br nil: the run has none): what the proxy
	// reaches it by (passed to the kernel as it is; nil: no bridge) and
	// what ends it.
	Bridge func(br *Brokers) (*sandbox.ToolBridge, func(), error)
	// Notices, if set, is told what the start says it runs without
	// (each also logged).
	Notices func([]string)
	// Session and Leader are the sandbox's (sandbox.Sandbox): a caller
	// that lives on beside many sandboxes runs each in a session of its
	// own, and learns its leader.
	Session bool
	Leader  func(pid int) error
	// Stop, if set, ends the run at once when it yields (a timeout, a
	// stop): Run returns that error.
	Stop <-chan error
}

// Run starts the agent's start in the kernel (its folders as the
// kernel's handles), has the kernel start the run's brokers, builds the
// sandbox and runs it, the kernel recording it by its pidfd and able to
// end it, then ends the start (the kernel revokes it). It returns the
// command's exit status (128+N for signal N). The error of a run whose
// command ran but whose brokers or kernel ended it says so, beside the
// status.
func Run(ctx context.Context, o Options) (code int, err error) {
	var ks *Start
	if o.Grants != nil {
		ks, err = StartGrants(ctx, o.Client, o.Comp, *o.Grants)
	} else {
		ks, err = StartAgent(ctx, o.Client, o.Comp, o.Agent, o.Harness)
	}
	if err != nil {
		return 0, o.refused(err)
	}
	defer ks.Close(context.Background())
	br := BeginBrokers(ks, o.Comp)
	var hook *sandbox.ToolBridge
	if o.Bridge != nil {
		var end func()
		if hook, end, err = o.Bridge(br); err != nil {
			return 0, err
		}
		if end != nil {
			defer end()
		}
	}
	var proxy *sandbox.Proxy
	if br != nil {
		if proxy, err = br.Proxy(o.Comp, o.Degraded, hook); err != nil {
			return 0, o.refused(err)
		}
		if proxy != nil {
			defer proxy.Stop()
		}
	}
	s, err := Build(o.Comp, o.Argv, o.Dir, o.InitPath, o.Degraded, proxy, func(so *sandbox.Options) { so.Held = ks.Held }, o.ExtraExec...)
	ks.DropHeld() // the sandbox holds its own copies of the kernel's handles
	if err != nil {
		return 0, o.refused(err)
	}
	if len(s.Notices) > 0 {
		if o.Notices != nil {
			o.Notices(s.Notices)
		}
		var es []audit.Entry
		for _, n := range s.Notices {
			es = append(es, audit.Entry{Kind: audit.KindWarn, Agent: o.LogName, Request: o.Request, Reason: n})
		}
		ks.log(es...)
	}
	s.Session, s.Leader = o.Session, o.Leader
	ks.Hook(ctx, s) // the kernel records it, and may end it
	if o.Stop != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case err := <-o.Stop:
				ks.Stop(err)
			case <-done:
			}
		}()
	}
	code, err = s.Start(o.Stdin, o.Stdout, o.Stderr, o.Status)
	var perr error
	if proxy != nil {
		perr = proxy.Stop()
	}
	if err != nil {
		return code, err
	}
	// The brokers' end is read before the start's own end, which ends
	// them too.
	berr := br.EndedErr()
	if kerr := ks.Finish(context.Background()); kerr != nil {
		return code, kerr // the kernel ended it: the status is not the command's
	}
	if berr != nil {
		perr = berr // its brokers ended under the command
	}
	if perr != nil {
		return code, &BrokerError{Err: perr}
	}
	return code, nil
}

// BrokerError is a run whose command ran, its connections through the
// proxy refused or its brokers ended under it: its status stands, but
// never as success.
type BrokerError struct{ Err error }

func (e *BrokerError) Error() string { return e.Err.Error() }
func (e *BrokerError) Unwrap() error { return e.Err }

// refused logs err once when it is a refusal of the run's own (a rule's,
// a missing part of the sandbox, a folder changed, a sealed secret with
// no proxy), and returns it. The kernel logs its own refusals.
func (o *Options) refused(err error) error {
	var se *StartError
	if errors.As(err, &se) {
		return err
	}
	reason := err.Error()
	var missing *sandbox.MissingError
	var sealed *SealedError
	switch {
	case refusal.RuleOf(err) != "":
		reason = refusal.RuleOf(err) + ": " + reason
	case errors.As(err, &missing), errors.Is(err, sandbox.ErrFolderChanged), errors.As(err, &sealed):
	default:
		return err
	}
	if lerr := Audit(o.Comp.Home, audit.Entry{Kind: audit.KindRefuse, Agent: o.LogName, Request: o.Request, Reason: reason}); lerr != nil {
		os.Stderr.WriteString("lnk: could not write the audit log: " + lerr.Error() + "\n")
	}
	return err
}

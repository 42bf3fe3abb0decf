package sandboxrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// Start is an agent's start the kernel holds for one sandbox: the
// kernel's connection, the start's number and the granted folders'
// handles, until the sandbox has them.
type Start struct {
	cl    *client.Client
	Agent string
	ID    uint64
	// Held are the folders' handles, by path (sandbox.Options.Held),
	// until DropHeld.
	Held  map[string]*os.File
	abort chan error         // Sandbox.Abort
	stop  context.CancelFunc // ends the watch
	// Log writes what lnk must log itself (the kernel gone: no kernel
	// is left to log it); nil: Audit under the owner's HOME.
	Log func(...audit.Entry)
}

// Harness names a harness's own sandbox (lnk agent harness run|check):
// the zero value is the agent's own.
type Harness struct{ Name, Profile string }

// StartError is the kernel's refusal of an agent's start (a
// *wire.Error beneath, its code kept), as the caller maps it.
type StartError struct {
	Agent string
	Err   error
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// ErrGrantsChanged is the rule of a start whose capabilities are not
// what the caller compiled: the grants changed between the two compiles.
var ErrGrantsChanged = refusal.Sentinel("grants-changed", "the agent's grants changed between this run's compile and the kernel's")

// StartAgent asks the kernel (cl, which the Start owns from here, closed
// on any failure) to start agent, the kernel compiling its grants
// itself, and takes its folders' handles: what the kernel granted must
// be what comp says.
func StartAgent(ctx context.Context, cl *client.Client, comp *caps.Compiled, agent string, h Harness) (*Start, error) {
	return start(ctx, cl, comp, &proto.StartRequest{Agent: agent, Folders: []proto.Folder{}, Compile: true, Harness: h.Name, Profile: h.Profile})
}

// StartGrants is StartAgent for a start of no agent (lnk sandbox run
// with flag grants or a sandbox file, whose run needs a broker): the
// kernel compiles g itself, and its grants must be comp's.
func StartGrants(ctx context.Context, cl *client.Client, comp *caps.Compiled, g proto.RunGrants) (*Start, error) {
	return start(ctx, cl, comp, &proto.StartRequest{Folders: []proto.Folder{}, Grants: &g})
}

// StartUnconfined is StartAgent for a harness's run with the agent's
// sandbox off (lnk agent harness run, h's "run" profile): the kernel
// reads the agent's setting and refuses unless its sandbox is off,
// grants no folder, and runs the start's proxy on a loopback port
// (UnconfinedBrokers). The caller attaches its command (AttachCommand).
func StartUnconfined(ctx context.Context, cl *client.Client, agent string, h Harness) (*Start, error) {
	return start(ctx, cl, nil, &proto.StartRequest{Agent: agent, Folders: []proto.Folder{}, Compile: true, Harness: h.Name, Profile: h.Profile, Unconfined: true})
}

func start(ctx context.Context, cl *client.Client, comp *caps.Compiled, req *proto.StartRequest) (*Start, error) {
	agent := req.Agent
	st, err := cl.Start(ctx, req)
	if err != nil {
		cl.Close()
		return nil, &StartError{Agent: agent, Err: err}
	}
	ks := &Start{cl: cl, Agent: agent, ID: st.Start, Held: map[string]*os.File{}, abort: make(chan error, 1)}
	if req.Unconfined {
		if len(st.Caps) > 0 { // nothing is bound with no sandbox
			ks.Close(ctx)
			return nil, &StartError{Agent: agent, Err: fmt.Errorf("the kernel granted folders to a start with no sandbox")}
		}
		return ks, nil
	}
	for _, ci := range st.Caps {
		got, f, err := cl.OpenFolder(ctx, st.Start, ci.Handle)
		if err != nil {
			ks.Close(ctx)
			return nil, &StartError{Agent: agent, Err: err}
		}
		ks.Held[got.Route] = f
	}
	if err := sameGrants(comp, st.Caps); err != nil {
		ks.Close(ctx)
		return nil, err
	}
	return ks, nil
}

// Client is the start's connection to the kernel.
func (ks *Start) Client() *client.Client { return ks.cl }

// sameGrants refuses a start whose capabilities are not comp's folders
// with their rights: the grants changed between lnk's compile and the
// kernel's.
func sameGrants(comp *caps.Compiled, got []proto.CapInfo) error {
	want := map[string]string{}
	for _, f := range comp.Folders {
		r := "read"
		if f.Access.Write {
			r = "read,write"
		}
		want[f.Path] = r
	}
	have := map[string]string{}
	for _, ci := range got {
		r := ci.Rights
		if r == "bind" {
			// Read-only, held for the bind alone: a folder that holds
			// what the sandbox hides (--read '~').
			r = "read"
		}
		have[ci.Route] = r
	}
	var diff []string
	for p, r := range want {
		if have[p] != r {
			diff = append(diff, p)
		}
	}
	for p := range have {
		if _, ok := want[p]; !ok {
			diff = append(diff, p)
		}
	}
	if len(diff) == 0 {
		return nil
	}
	sort.Strings(diff)
	return &refusal.Refusal{Rule: ErrGrantsChanged.Rule, Err: ErrGrantsChanged,
		Reason: fmt.Sprintf("the kernel's grants of agent %s differ from what this run compiled (%s): they changed meanwhile", comp.AgentName, strings.Join(diff, ", ")),
		Hint:   "run it again: lnk sandbox run … -- COMMAND"}
}

// Hook makes s run under the start: its pidfd goes to the kernel once it
// runs, and the kernel's end of the start, or of its connection, stops
// it.
func (ks *Start) Hook(ctx context.Context, s *sandbox.Sandbox) {
	s.Abort = ks.abort
	s.Attached = func(pidfd *os.File) error { return ks.AttachCommand(ctx, pidfd, ks.Stop) }
}

// AttachCommand hands the kernel pidfd, the start's sandbox (or, for an
// unconfined start, its command), and watches the start: stop is called
// with why once the kernel ends it, or its connection ends. A pidfd the
// kernel did not record is an error: the caller kills what it names.
func (ks *Start) AttachCommand(ctx context.Context, pidfd *os.File, stop func(error)) error {
	if err := ks.cl.Attach(ctx, ks.ID, pidfd); err != nil {
		var we *wire.Error
		if errors.As(err, &we) { // the kernel logged its refusal
			return &refusal.Refusal{Rule: "not-recorded", Err: err, Hint: "lnk kernel status",
				Reason: "the kernel did not record the sandbox, which was killed: " + we.Message}
		}
		return &GoneError{Err: err}
	}
	wctx, cancel := context.WithCancel(ctx)
	ks.stop = cancel
	go func() {
		reason, err := ks.cl.Watch(wctx, ks.ID)
		if wctx.Err() != nil {
			return // the caller is done with the sandbox
		}
		if err == nil {
			err = &EndedError{Agent: ks.Agent, Why: reason} // the kernel logged its end
		} else {
			err = &GoneError{Err: err}
			// No kernel is left to log it: lnk does.
			ks.log(audit.Entry{Kind: audit.KindKernel, Agent: ks.Agent, Start: ks.ID, Request: "sandbox run",
				Reason: "the kernel's connection ended while the sandbox ran: the sandbox was killed"})
		}
		stop(err)
	}()
	return nil
}

// Stop stops the sandbox at once with err, as the kernel's end does
// (the caller's timeout, or its own stop). It never blocks.
func (ks *Start) Stop(err error) {
	select {
	case ks.abort <- err:
	default: // already stopping
	}
}

func (ks *Start) log(es ...audit.Entry) {
	if ks.Log != nil {
		ks.Log(es...)
		return
	}
	if err := Audit(os.Getenv("HOME"), es...); err != nil {
		fmt.Fprintf(os.Stderr, "lnk: could not write the audit log: %v\n", err)
	}
}

// DropHeld closes the caller's copies of the folders' handles once the
// sandbox is built: it holds its own until bubblewrap has them.
func (ks *Start) DropHeld() {
	if ks == nil {
		return
	}
	for p, f := range ks.Held {
		f.Close()
		delete(ks.Held, p)
	}
}

// Finish ends the start once the sandbox has ended (the kernel revokes
// its capabilities) and lets go of the kernel and the folders' handles.
// It returns an *EndedError when the kernel had ended the start itself
// (and killed the sandbox): then the command's status is not its own.
func (ks *Start) Finish(ctx context.Context) error {
	if ks == nil || ks.cl == nil {
		return nil
	}
	if ks.stop != nil {
		ks.stop()
	}
	ks.DropHeld()
	// Closing the connection would end the start too; End says so in
	// the audit log as the start's own end, and says whether the kernel
	// ended it first.
	r, err := ks.cl.EndStart(ctx, ks.Agent, ks.ID)
	ks.cl.Close()
	ks.cl = nil
	if err == nil && r.Ended != "" {
		return &EndedError{Agent: ks.Agent, Why: r.Ended}
	}
	return nil
}

// Close is Finish where its word is not wanted (a failed start).
func (ks *Start) Close(ctx context.Context) { ks.Finish(ctx) }

// EndedError is a sandbox the kernel ended (lnk kernel end, a broker of
// the start that died): the command's status is not its own.
type EndedError struct{ Agent, Why string }

func (e *EndedError) Error() string { return "the kernel ended the sandbox: " + e.Why }

// Hint is the command that starts it again.
func (e *EndedError) Hint() string {
	return "lnk sandbox run --agent " + e.Agent + " -- COMMAND starts it again"
}

// GoneError is a sandbox stopped because the kernel could not be
// reached: none runs that the kernel does not record.
type GoneError struct{ Err error }

func (e *GoneError) Error() string {
	return fmt.Sprintf("the kernel's connection ended while the sandbox ran: the sandbox was killed (%v)", e.Err)
}
func (e *GoneError) Unwrap() error { return e.Err }

// Hint is where to look.
func (e *GoneError) Hint() string {
	return "lnk kernel status; lnk kernel run shows why in the foreground"
}

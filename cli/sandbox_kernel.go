package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// A sandbox that runs for an agent (lnk sandbox run --agent) runs with
// what the kernel holds: lnk asks the kernel (started on demand) to start
// the agent, the kernel compiling its grants itself; takes each granted
// folder as the kernel's O_PATH handle over SCM_RIGHTS, which bubblewrap
// binds (--bind-fd), so no path is walked again between the kernel's
// check and the bind; hands the kernel bubblewrap's pidfd; and waits on
// the kernel beside the sandbox. The kernel ending the start (lnk kernel
// end AGENT), or the kernel's connection ending (the kernel stopped,
// crashed or was killed), kills the sandbox at once: none runs that the
// kernel does not record. A sandbox of flag grants (no --agent) is no
// agent's, and opens its folders itself (kernel/sandbox).

// kernelStart is an agent's start the kernel holds for one sandbox.
type kernelStart struct {
	cl    *client.Client
	agent string
	start uint64
	held  map[string]*os.File // the folders' handles, by path
	abort chan error          // Sandbox.Abort
	stop  context.CancelFunc  // ends the watch
}

// startInKernel starts agent in the kernel and takes its folders'
// handles; what the kernel granted must be what comp says.
func startInKernel(ctx context.Context, comp *caps.Compiled, agent string, hp harnessProfile) (*kernelStart, error) {
	cl, err := kernelClient(ctx)
	if err != nil {
		return nil, err
	}
	st, err := cl.Start(ctx, &proto.StartRequest{Agent: agent, Folders: []proto.Folder{}, Compile: true, Harness: hp.name, Profile: hp.profile})
	if err != nil {
		cl.Close()
		return nil, kernelStartErr(err, agent)
	}
	ks := &kernelStart{cl: cl, agent: agent, start: st.Start, held: map[string]*os.File{}, abort: make(chan error, 1)}
	for _, ci := range st.Caps {
		got, f, err := cl.OpenFolder(ctx, st.Start, ci.Handle)
		if err != nil {
			ks.close(ctx)
			return nil, kernelStartErr(err, agent)
		}
		ks.held[got.Route] = f
	}
	if err := sameGrants(comp, st.Caps); err != nil {
		ks.close(ctx)
		return nil, auditRefusal("sandbox run", agent, Refused(err, "run it again: lnk sandbox run --agent "+agent+" -- COMMAND"))
	}
	return ks, nil
}

// startErr is the kernel's refusal of a start, as the owner reads it.
func kernelStartErr(err error, agent string) error {
	var we *wire.Error
	if errors.As(err, &we) {
		switch we.Code {
		case proto.CodeRefused:
			return Refused(fmt.Errorf("the kernel refused agent %s's start: %s", agent, we.Message),
				"lnk agent show "+agent+" --permissions shows its grants; lnk agent deny "+agent+" … takes one back")
		case proto.CodeMissing:
			return Fail(ExitMissing, fmt.Errorf("the kernel has no agent %s: %s", agent, we.Message), "lnk agent list shows the agents")
		}
	}
	return kernelErr(err)
}

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
	if len(diff) > 0 {
		sort.Strings(diff)
		return fmt.Errorf("the kernel's grants of agent %s differ from what this run compiled (%s): they changed meanwhile", comp.AgentName, strings.Join(diff, ", "))
	}
	return nil
}

// hook makes s run under the start: its pidfd goes to the kernel once it
// runs, and the kernel's end of the start, or of its connection, stops
// it.
func (ks *kernelStart) hook(ctx context.Context, s *sandbox.Sandbox) {
	wctx, stop := context.WithCancel(ctx)
	ks.stop = stop
	s.Abort = ks.abort
	s.Attached = func(pidfd *os.File) error {
		if err := ks.cl.Attach(ctx, ks.start, pidfd); err != nil {
			var we *wire.Error
			if errors.As(err, &we) { // the kernel logged its refusal
				return Refused(fmt.Errorf("the kernel did not record the sandbox, which was killed: %s", we.Message), "lnk kernel status")
			}
			return ks.gone(err)
		}
		go func() {
			reason, err := ks.cl.Watch(wctx, ks.start)
			if wctx.Err() != nil {
				return // lnk itself is done with the sandbox
			}
			if err == nil {
				err = ks.ended(reason) // the kernel logged its end
			} else {
				err = ks.gone(err)
				// No kernel is left to log it: lnk does.
				writeSandboxAudit(audit.Entry{Kind: audit.KindKernel, Agent: ks.agent, Start: ks.start, Request: "sandbox run",
					Reason: "the kernel's connection ended while the sandbox ran: the sandbox was killed"})
			}
			ks.abort <- err
		}()
		return nil
	}
}

// gone is the error of a sandbox stopped because the kernel could not
// be reached.
func (ks *kernelStart) gone(err error) error {
	return Fail(ExitFailure, fmt.Errorf("the kernel's connection ended while the sandbox ran: the sandbox was killed (%v)", err),
		"lnk kernel status", "lnk kernel run shows why in the foreground")
}

// dropHeld closes lnk's copies of the folders' handles once the sandbox
// is built: it holds its own until bubblewrap has them.
func (ks *kernelStart) dropHeld() {
	if ks == nil {
		return
	}
	for p, f := range ks.held {
		f.Close()
		delete(ks.held, p)
	}
}

// finish ends the start once the sandbox has ended (the kernel revokes
// its capabilities) and lets go of the kernel and the folders' handles.
// It returns the kernel's word when the kernel had ended the start
// itself (and killed the sandbox): then the command's status is not its
// own.
func (ks *kernelStart) finish(ctx context.Context) error {
	if ks == nil || ks.cl == nil {
		return nil
	}
	if ks.stop != nil {
		ks.stop()
	}
	ks.dropHeld()
	// Closing the connection would end the start too; End says so in
	// the audit log as the start's own end, and says whether the kernel
	// ended it first.
	r, err := ks.cl.EndStart(ctx, ks.agent, ks.start)
	ks.cl.Close()
	ks.cl = nil
	if err == nil && r.Ended != "" {
		return ks.ended(r.Ended)
	}
	return nil
}

// close is finish where its word is not wanted (a failed start).
func (ks *kernelStart) close(ctx context.Context) { ks.finish(ctx) }

// ended is the error of a sandbox the kernel ended.
func (ks *kernelStart) ended(why string) error {
	return Fail(ExitFailure, fmt.Errorf("the kernel ended the sandbox: %s", why),
		"lnk sandbox run --agent "+ks.agent+" -- COMMAND starts it again")
}

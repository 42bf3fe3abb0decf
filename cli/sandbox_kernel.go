package cli

import (
	"context"
	"errors"
	"fmt"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/services/sandboxrun"
)

// A sandbox that runs for an agent (lnk sandbox run --agent, check,
// file) runs with what the kernel holds: services/sandboxrun, the one
// orchestrator of an agent's run (the run tool calls it too), asks the
// kernel (started on demand) to start the agent, the kernel compiling
// its grants itself, and takes each granted folder as the kernel's
// O_PATH handle, which bubblewrap binds (--bind-fd); the kernel records
// the sandbox by its pidfd, and its end of the start, or of its
// connection, kills the sandbox at once. This file maps what sandboxrun
// says to lnk's exit codes and hints. A sandbox of flag grants (no
// --agent) is no agent's, and opens its folders itself (kernel/sandbox).

// startInKernel starts agent in the kernel and takes its folders'
// handles; what the kernel granted must be what comp says.
func startInKernel(ctx context.Context, comp *caps.Compiled, agent string, hp harnessProfile) (*sandboxrun.Start, error) {
	cl, err := kernelClient(ctx)
	if err != nil {
		return nil, err
	}
	ks, err := sandboxrun.StartAgent(ctx, cl, comp, agent, sandboxrun.Harness{Name: hp.name, Profile: hp.profile})
	if errors.Is(err, sandboxrun.ErrGrantsChanged) {
		return nil, auditRefusal("sandbox run", agent, err)
	}
	if err != nil {
		return nil, runErr(err, agent)
	}
	ks.Log = writeSandboxAudit
	return ks, nil
}

// startGrantsInKernel starts a start of no agent in the kernel for the
// flag grants or sandbox file of spec, which the kernel compiles again:
// what it granted must be what comp says.
func startGrantsInKernel(ctx context.Context, spec *sandboxSpec, comp *caps.Compiled) (*sandboxrun.Start, error) {
	g, err := spec.runGrants()
	if err != nil {
		return nil, err
	}
	cl, err := kernelClient(ctx)
	if err != nil {
		return nil, err
	}
	ks, err := sandboxrun.StartGrants(ctx, cl, comp, *g)
	if errors.Is(err, sandboxrun.ErrGrantsChanged) {
		return nil, auditRefusal(spec.request("sandbox check"), spec.logName(), err)
	}
	if err != nil {
		return nil, runErr(err, "")
	}
	ks.Log = writeSandboxAudit
	return ks, nil
}

// runErr maps what an agent's run says to lnk's exit codes: the
// kernel's refusal of the start, a refusal of its brokers, a sandbox
// this machine cannot build.
func runErr(err error, agent string) error {
	var se *sandboxrun.StartError
	var missing *sandboxrun.InstallError
	var sealed *sandboxrun.SealedError
	var gone *sandboxrun.GoneError
	var ended *sandboxrun.EndedError
	switch {
	case errors.As(err, &gone), errors.As(err, &ended):
		return Fail(ExitFailure, err, sandboxrun.Hint(err)) // said as it is
	case errors.As(err, &se):
		return kernelStartErr(se.Err, agent)
	case errors.As(err, &sealed):
		return Refused(err, sealed.Hints()...)
	case errors.As(err, &missing):
		return Fail(ExitFailure, err, missing.Hint())
	}
	if berr := buildErr(err); berr != err {
		return berr
	}
	var we *wire.Error
	if errors.As(err, &we) || errors.Is(err, wire.ErrClosed) {
		return kernelErr(err)
	}
	return err
}

// kernelStartErr is the kernel's refusal of a start, as the owner reads
// it.
func kernelStartErr(err error, agent string) error {
	var we *wire.Error
	if errors.As(err, &we) && agent == "" && we.Code == proto.CodeRefused { // a run of flag grants or a sandbox file
		return Refused(fmt.Errorf("the kernel refused this run's grants: %s", we.Message), "lnk sandbox run --help names the grants")
	}
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

package kernel

import (
	"context"
	"os"

	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// need is the capability a request needs before its handler runs.
type need uint8

const (
	needNothing need = iota // the owner's own request: no capability
	needCap                 // a capability of the agent's, any rights
	needRead                // a folder capability with the read right
	needWrite               // a folder capability with the write right
)

// route is one row of the kernel's request table, bound to a kernel by
// [Kernel.table] into a [wire.Route] the shared record server runs.
type route struct {
	spec    wire.Spec
	needs   need
	testing bool // served only with LNK_KERNEL_TESTING=1
	bind    func(k *Kernel, spec wire.Spec) wire.Route
}

// capRef is a request body that names a capability.
type capRef interface{ CapRef() (agent, handle string) }

// call is one request as a handler sees it.
type call struct {
	conn  *conn
	files []*os.File // arrived with the request; closed after the handler, unless set to nil
	cap   Cap        // the capability, for a route that needs one
	dir   *os.File   // a duplicate of its folder handle, closed after
	after func()     // run once the answer is written
}

// handle makes a route; fn gets the strictly decoded body. A route that
// needs a capability must take a body that names one: a table that
// breaks this is a bug, and panics.
func handle[Req, Resp any](spec wire.Spec, needs need, fn func(ctx context.Context, c *call, req *Req) (*Resp, []*os.File, error)) route {
	if _, ok := any(new(Req)).(capRef); needs != needNothing && !ok {
		panic("kernel: " + spec.Name + " needs a capability but names none")
	}
	return route{spec: spec, needs: needs, bind: func(k *Kernel, spec wire.Spec) wire.Route {
		return wire.Handle(spec, func(ctx context.Context, r *wire.Request, req *Req) (*Resp, []*os.File, error) {
			cl := &call{conn: connOf(ctx), files: r.Files}
			var resp *Resp
			files, err := k.dispatch(ctx, spec, needs, cl, any(req), func() ([]*os.File, error) {
				var files []*os.File
				var err error
				resp, files, err = fn(ctx, cl, req)
				return files, err
			})
			if cl.after != nil {
				r.After(cl.after)
			}
			return resp, files, err
		})
	}}
}

// table builds the kernel's request table, served by [wire.Server].
func (k *Kernel) table() map[wire.Type]*wire.Route {
	rows := []route{
		handle(proto.Ping, needNothing, k.handlePing),
		handle(proto.Status, needNothing, k.handleStatus),
		handle(proto.Stop, needNothing, k.handleStop),
		handle(proto.Start, needNothing, k.handleStart),
		handle(proto.End, needNothing, k.handleEnd),
		handle(proto.Check, needCap, k.handleCheck),
		handle(proto.Read, needRead, k.handleRead),
		handle(proto.Write, needWrite, k.handleWrite),
		handle(proto.RunProxy, needNothing, k.handleRunProxy),     // start_proxy.go
		handle(proto.RunAsk, needNothing, k.handleRunAsk),         // start_ask.go
		handle(proto.RunBridge, needNothing, k.handleRunBridge),   // start_bridge.go
		handle(proto.OpenFolder, needNothing, k.handleOpenFolder), // handlers_sandbox.go
		handle(proto.Attach, needNothing, k.handleAttach),
		handle(proto.Watch, needNothing, k.handleWatch),
		handle(proto.EndAgent, needNothing, k.handleEndAgent),
	}
	for _, r := range []route{
		handle(proto.Hold, needNothing, k.handleHold),
		handle(proto.BrokerHold, needNothing, k.handleBrokerHold),
		handle(proto.BrokerFDs, needNothing, k.handleBrokerFDs),
	} {
		r.testing = true
		rows = append(rows, r)
	}
	var wrs []wire.Route
	for _, r := range rows {
		if r.testing && !k.opts.Testing {
			continue
		}
		switch r.spec.Type {
		case proto.Ping.Type, proto.Status.Type, proto.Check.Type:
			// They never block (no broker, no wait): the reader runs them
			// itself, which saves a goroutine hand-off per request.
			r.spec.Flags |= wire.Inline
		}
		wrs = append(wrs, r.bind(k, r.spec))
	}
	return wire.Table(wrs...)
}

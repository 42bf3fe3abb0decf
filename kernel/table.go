package kernel

import (
	"context"
	"fmt"
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

// route is one row of the kernel's request table.
type route struct {
	spec    wire.Spec
	needs   need
	testing bool // served only with LNK_KERNEL_TESTING=1
	// inline routes never block (no broker, no wait): the reader runs
	// them itself, which saves a goroutine hand-off per request.
	inline bool
	decode func(body []byte) (any, error)
	serve  func(ctx context.Context, c *call, body any) (any, []*os.File, error)
}

// capRef is a request body that names a capability.
type capRef interface{ CapRef() (agent, handle string) }

// call is one request as a handler sees it.
type call struct {
	conn  *conn
	id    uint64
	files []*os.File // arrived with the request; closed after the handler
	cap   Cap        // the capability, for a route that needs one
	dir   *os.File   // a duplicate of its folder handle, closed after
	after func()     // run once the answer is written
}

// handle makes a route; fn gets the strictly decoded body.
func handle[Req, Resp any](spec wire.Spec, needs need, fn func(ctx context.Context, c *call, req *Req) (*Resp, []*os.File, error)) route {
	return route{
		spec:  spec,
		needs: needs,
		decode: func(body []byte) (any, error) {
			v := new(Req)
			if err := wire.Unmarshal(body, v); err != nil {
				return nil, err
			}
			if needs != needNothing {
				if _, ok := any(v).(capRef); !ok {
					return nil, fmt.Errorf("%s names no capability", spec.Name)
				}
			}
			return v, nil
		},
		serve: func(ctx context.Context, c *call, body any) (any, []*os.File, error) {
			resp, files, err := fn(ctx, c, body.(*Req))
			if err != nil {
				wire.CloseFiles(files)
				return nil, nil, err
			}
			if len(files) != spec.ReplyFDs {
				wire.CloseFiles(files)
				return nil, nil, fmt.Errorf("%s: handler returned %d fds, want %d", spec.Name, len(files), spec.ReplyFDs)
			}
			return resp, files, nil
		},
	}
}

// table builds the kernel's request table.
func (k *Kernel) table() map[wire.Type]*route {
	rows := []route{
		handle(proto.Ping, needNothing, k.handlePing),
		handle(proto.Status, needNothing, k.handleStatus),
		handle(proto.Stop, needNothing, k.handleStop),
		handle(proto.Start, needNothing, k.handleStart),
		handle(proto.End, needNothing, k.handleEnd),
		handle(proto.Check, needCap, k.handleCheck),
		handle(proto.Read, needRead, k.handleRead),
		handle(proto.Write, needWrite, k.handleWrite),
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
	for i := range rows {
		switch rows[i].spec.Type {
		case proto.Ping.Type, proto.Status.Type, proto.Check.Type:
			rows[i].inline = true
		}
	}
	m := map[wire.Type]*route{}
	for i := range rows {
		r := &rows[i]
		if r.testing && !k.opts.Testing {
			continue
		}
		if _, dup := m[r.spec.Type]; dup {
			panic("kernel: request type given twice: " + r.spec.Name)
		}
		m[r.spec.Type] = r
	}
	return m
}

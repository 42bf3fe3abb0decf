package toolbridge

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"

	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// KernelChannel is how a confined bridge (lnk-toolbridge, which may
// execute nothing and make no socket) gets its sessions' servers: it
// names the tool on its channel to the kernel, which checks it against
// the start's grants, starts the server through the one launcher (or
// dials a shared tool's hub) and hands back its stdio (or the hub's
// connection). The bridge never learns the server's pid: it ends a
// server by closing the life the kernel handed with it, and the kernel
// kills the server's process group then.
type KernelChannel struct {
	C *wire.Client
}

// server asks the kernel for a server of def's tool, and returns it
// with the digest of the definition the kernel started it from.
func (k *KernelChannel) server(ctx context.Context, def *tooldef.Definition) (*server, string, error) {
	req := &proto.ToolRequest{Tool: def.Name}
	var rep proto.ToolReply
	if def.Shared {
		files, err := k.C.Call(ctx, proto.ToolDial, req, &rep)
		if err != nil {
			return nil, "", fmt.Errorf("the kernel: %w", err)
		}
		c, err := net.FileConn(files[0])
		files[0].Close()
		if err != nil {
			return nil, "", err
		}
		return hubServer(c), rep.Digest, nil
	}
	files, err := k.C.Call(ctx, proto.ToolStart, req, &rep)
	if err != nil {
		return nil, "", fmt.Errorf("the kernel: %w", err)
	}
	s := &server{stdin: files[0], life: files[3], stderr: &capBuffer{max: 16 << 10},
		waiting: map[uint64]chan answer{}, done: make(chan struct{}), max: maxAnswer}
	if rep.URL {
		s.grace = remoteGrace
	}
	go func(f *os.File) {
		io.Copy(s.stderr, f)
		f.Close()
	}(files[2])
	go func(f *os.File) {
		s.read(f)
		f.Close()
	}(files[1])
	return s, rep.Digest, nil
}

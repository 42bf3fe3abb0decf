package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"lnk.dev/lnk/helpers/fsbroker/fs"
	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// MaxWrite caps what a write request may carry (read from its fd).
const MaxWrite = 64 << 20

// fsBrokerName names the file broker of a start.
func fsBrokerName(start uint64) string { return "fs/" + strconv.FormatUint(start, 10) }

// brokerPath is the broker binary name in the folder of Link's programs
// (or in BinDir), refused (beside.ErrMissing) when it is not there.
func (k *Kernel) brokerPath(name string) (string, error) {
	if k.opts.BinDir != "" {
		return beside.In(k.opts.BinDir, name)
	}
	return beside.Program(name)
}

// startFSBroker starts (and keeps up) the file broker of a start: its
// roots are exactly the start's folder capabilities, each named by its
// handle, writable only where the capability is. Without lnk-fsbroker
// the start is refused: its folders could not be served.
func (k *Kernel) startFSBroker(start uint64) error {
	bin, err := k.brokerPath("lnk-fsbroker")
	if err != nil {
		return err
	}
	var roots []fs.Root
	k.bro.add(BrokerSpec{
		Name: fsBrokerName(start),
		Path: bin,
		Connect: func(ctx context.Context, ch *os.File) (io.Closer, error) {
			dirs, err := k.caps.StartDirs(start)
			if err != nil {
				ch.Close()
				return nil, err
			}
			defer func() {
				for _, d := range dirs {
					d.Dir.Close()
				}
			}()
			if len(dirs) == 0 {
				ch.Close()
				return nil, errors.New("the start has no folder left")
			}
			roots = roots[:0]
			for _, d := range dirs {
				roots = append(roots, fs.Root{Name: d.Handle.String(), Dir: d.Dir, Write: d.Rights&RightWrite != 0})
			}
			c, err := fs.New(ch)
			if err != nil {
				return nil, err
			}
			if _, err := c.Hello(ctx, roots); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		},
	})
	return nil
}

// fsClient is the file broker of the capability's start.
func (k *Kernel) fsClient(ctx context.Context, cp Cap) (*fs.Client, error) {
	// Started at the start's first file request, once; never for a start
	// already revoked (endStart revokes under fsMu, then removes it).
	k.fsMu.Lock()
	if _, live := k.caps.Agent(cp.Start); !live {
		k.fsMu.Unlock()
		return nil, capRefused(ErrRevokedHandle, cp.Handle.Short())
	}
	var err error
	if !k.bro.has(fsBrokerName(cp.Start)) {
		err = k.startFSBroker(cp.Start)
	}
	k.fsMu.Unlock()
	if err != nil {
		return nil, brokerErr("file", err)
	}
	cl, err := k.bro.client(ctx, fsBrokerName(cp.Start))
	if err != nil {
		return nil, err
	}
	return cl.(*fs.Client), nil
}

// fsErr turns the broker's answer into the caller's: the resolver's
// refusal stays a refusal; a dead broker is a broker error.
func fsErr(err error) error {
	var re *resolve.Error
	if errors.As(err, &re) && re.Kind != nil {
		// The caller is told the path; the audit log only the rule.
		return &refusal.Refusal{Reason: err.Error(), Rule: re.Kind.Error(), Err: wire.Errorf(proto.CodeRefused, "%v", err)}
	}
	return brokerErr("file", err)
}

// handleRead opens a file beneath a folder capability through the file
// broker; the open fd goes back to the caller, the data never through
// the kernel.
func (k *Kernel) handleRead(ctx context.Context, c *call, req *proto.FileRequest) (*proto.Empty, []*os.File, error) {
	cl, err := k.fsClient(ctx, c.cap)
	if err != nil {
		return nil, nil, err
	}
	f, _, err := cl.Open(ctx, c.cap.Handle.String(), req.Path, 0)
	if err != nil {
		return nil, nil, fsErr(err)
	}
	return &proto.Empty{}, []*os.File{f}, nil
}

// handleWrite writes the bytes of the fd the request carries (at most
// MaxWrite) to a file beneath a writable folder capability, atomically,
// through the file broker.
func (k *Kernel) handleWrite(ctx context.Context, c *call, req *proto.FileRequest) (*proto.Empty, []*os.File, error) {
	data, err := io.ReadAll(io.LimitReader(c.files[0], MaxWrite+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read what to write: %w", err)
	}
	if len(data) > MaxWrite {
		return nil, nil, wire.Errorf(proto.CodeRefused, "a write of more than %d bytes", MaxWrite)
	}
	cl, err := k.fsClient(ctx, c.cap)
	if err != nil {
		return nil, nil, err
	}
	if _, err := cl.Write(ctx, c.cap.Handle.String(), req.Path, data, fs.WriteOptions{}); err != nil {
		return nil, nil, fsErr(err)
	}
	return &proto.Empty{}, nil, nil
}

package fsbroker

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
)

// Root is a folder the broker serves, by the name the hello gave it.
type Root struct {
	Name  string
	Write bool
	R     *resolve.Root
}

type broker struct {
	roots map[string]*Root
	open  openOut // the open's reply, reused: see serveOpen
}

// Table is the broker's request table over roots (after its hello). A
// table serves one channel: its Inline open reuses one reply value.
func Table(roots []*Root) map[wire.Type]*wire.Route {
	b := &broker{roots: map[string]*Root{}}
	for _, r := range roots {
		b.roots[r.Name] = r
	}
	return wire.Table(
		wire.Handle(SpecOpen, b.serveOpen),
		wire.Handle(SpecWrite, b.serveWrite),
		wire.Handle(SpecReplace, b.serveReplace),
		wire.Handle(SpecMkdir, b.serveMkdir),
		wire.Handle(SpecRename, b.serveRename),
		wire.Handle(SpecRemove, b.serveRemove),
		wire.Handle(SpecList, b.serveList),
		wire.Handle(SpecWalk, b.serveWalk),
		wire.Handle(SpecStat, b.serveStat),
	)
}

func (b *broker) root(name string, write bool) (*Root, error) {
	r, ok := b.roots[name]
	if !ok {
		return nil, ToWire(fmt.Errorf("folder %q: %w", name, ErrNoRoot))
	}
	if write && !r.Write {
		return nil, ToWire(fmt.Errorf("folder %q: %w", name, ErrReadOnly))
	}
	return r, nil
}

// serveOpen hands the opened fd back bare (wire's ReplyFD): an *os.File
// would cost two more system calls for nothing. Its reply is b.open,
// reused: open is Inline, so it runs on the server's one reader thread
// and its reply is encoded before the next request is read.
func (b *broker) serveOpen(ctx context.Context, req *wire.Request, q *OpenReq) (*openOut, []*os.File, error) {
	r, err := b.root(q.Root, false)
	if err != nil {
		return nil, nil, err
	}
	fd, v, err := r.R.OpenFd(q.Path, q.Max)
	if err != nil {
		return nil, nil, ToWire(err)
	}
	req.ReplyFD(fd)
	b.open = openOut{v: v}
	return &b.open, nil, nil
}

// data is a write's bytes: inline, or the whole regular file beside it.
func data(q *WriteReq, files []*os.File) ([]byte, error) {
	if len(files) == 0 {
		return q.Data, nil
	}
	if len(q.Data) != 0 {
		return nil, wire.Errorf("invalid", "a write carries its data inline or in an fd, not both")
	}
	var st unix.Stat_t
	fd := int(files[0].Fd())
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, wire.Errorf("invalid", "a write's data must come in a regular file (a memfd)")
	}
	if st.Size > MaxWrite {
		return nil, ToWire(fmt.Errorf("write of %d bytes, over the cap of %d: %w", st.Size, MaxWrite, resolve.ErrTooLarge))
	}
	buf := make([]byte, st.Size)
	for off := 0; off < len(buf); {
		n, err := unix.Pread(fd, buf[off:], int64(off))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the write's data: %w", err)
		}
		if n == 0 {
			return buf[:off], nil // it shrank: take what is there
		}
		off += n
	}
	return buf, nil
}

func (b *broker) serveWrite(ctx context.Context, req *wire.Request, q *WriteReq) (*WriteReply, []*os.File, error) {
	return b.write(req, q, false)
}

func (b *broker) serveReplace(ctx context.Context, req *wire.Request, q *WriteReq) (*WriteReply, []*os.File, error) {
	return b.write(req, q, true)
}

func (b *broker) write(req *wire.Request, q *WriteReq, replace bool) (*WriteReply, []*os.File, error) {
	r, err := b.root(q.Root, true)
	if err != nil {
		return nil, nil, err
	}
	expect, err := resolve.ParseVersion(q.Expect)
	if err != nil {
		return nil, nil, wire.Errorf("invalid", "%q is not a version", q.Expect)
	}
	d, err := data(q, req.Files)
	if err != nil {
		return nil, nil, err
	}
	var v resolve.Version
	if replace {
		v, err = r.R.Replace(q.Path, d, expect)
	} else {
		v, err = r.R.WriteFile(q.Path, d, resolve.WriteOptions{Mode: fs.FileMode(q.Mode) & 0o777, Expect: expect})
	}
	if err != nil {
		return nil, nil, ToWire(err)
	}
	return &WriteReply{Version: v.String()}, nil, nil
}

func (b *broker) serveMkdir(ctx context.Context, _ *wire.Request, q *MkdirReq) (*Empty, []*os.File, error) {
	r, err := b.root(q.Root, true)
	if err != nil {
		return nil, nil, err
	}
	mode := fs.FileMode(q.Mode) & 0o777
	if mode == 0 {
		mode = 0o700
	}
	if q.All {
		err = r.R.MkdirAll(q.Path, mode)
	} else {
		err = r.R.Mkdir(q.Path, mode)
	}
	if err != nil {
		return nil, nil, ToWire(err)
	}
	return &Empty{}, nil, nil
}

func (b *broker) serveRename(ctx context.Context, _ *wire.Request, q *RenameReq) (*Empty, []*os.File, error) {
	r, err := b.root(q.Root, true)
	if err != nil {
		return nil, nil, err
	}
	if q.NoReplace {
		err = r.R.RenameNoReplace(q.From, q.To)
	} else {
		err = r.R.Rename(q.From, q.To)
	}
	if err != nil {
		return nil, nil, ToWire(err)
	}
	return &Empty{}, nil, nil
}

func (b *broker) serveRemove(ctx context.Context, _ *wire.Request, q *PathReq) (*Empty, []*os.File, error) {
	r, err := b.root(q.Root, true)
	if err != nil {
		return nil, nil, err
	}
	if err := r.R.Remove(q.Path); err != nil {
		return nil, nil, ToWire(err)
	}
	return &Empty{}, nil, nil
}

func (b *broker) serveStat(ctx context.Context, _ *wire.Request, q *PathReq) (*StatReply, []*os.File, error) {
	r, err := b.root(q.Root, false)
	if err != nil {
		return nil, nil, err
	}
	info, err := r.R.Stat(q.Path)
	if err != nil {
		return nil, nil, ToWire(err)
	}
	return &StatReply{Mode: uint32(info.Mode), Size: info.Size, MtimeNs: info.ModTime.UnixNano(), Version: info.Version.String()}, nil, nil
}

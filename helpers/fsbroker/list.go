package fsbroker

import (
	"context"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
)

func (b *broker) serveList(ctx context.Context, _ *wire.Request, q *ListReq) (*ListReply, []*os.File, error) {
	r, err := b.root(q.Root, false)
	if err != nil {
		return nil, nil, err
	}
	ents, err := r.R.List(q.Path, resolve.ListOptions{SkipHidden: q.SkipHidden, Max: q.Max})
	if err != nil {
		return nil, nil, ToWire(err)
	}
	return entriesReply(ents)
}

func (b *broker) serveWalk(ctx context.Context, _ *wire.Request, q *ListReq) (*ListReply, []*os.File, error) {
	r, err := b.root(q.Root, false)
	if err != nil {
		return nil, nil, err
	}
	var ents []resolve.Entry
	err = r.R.Walk(q.Path, resolve.WalkOptions{SkipHidden: q.SkipHidden, MaxDepth: q.MaxDepth, Max: q.Max},
		func(e resolve.Entry) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			ents = append(ents, e)
			return nil
		})
	if err != nil {
		return nil, nil, ToWire(err)
	}
	return entriesReply(ents)
}

// entriesReply puts the entries, as a JSON array, in a memfd: a listing
// may be larger than a record.
func entriesReply(ents []resolve.Entry) (*ListReply, []*os.File, error) {
	out := make([]Entry, len(ents))
	for i, e := range ents {
		out[i] = Entry{Path: e.Path, Name: e.Name, Type: uint32(e.Type)}
	}
	body, err := wire.Marshal(out)
	if err != nil {
		return nil, nil, err
	}
	f, err := Memfd("lnk-list", body)
	if err != nil {
		return nil, nil, err
	}
	return &ListReply{Count: len(out)}, []*os.File{f}, nil
}

// Memfd returns a sealed memfd holding b, read from offset 0.
func Memfd(name string, b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	for off := 0; off < len(b); {
		n, err := unix.Pwrite(fd, b[off:], int64(off))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		off += n
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

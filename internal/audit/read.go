package audit

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The reader's bounds, from the spec's rules for `lnk agent logs`.
const (
	ReadChunk = 4 << 20  // the most of the log read at once
	MaxPiece  = 64 << 10 // a line without an end is shown in pieces this long
)

// splitter turns chunks into lines, holding at most MaxPiece bytes of a
// line without an end between chunks.
type splitter struct{ partial []byte }

func (s *splitter) feed(chunk []byte, emit func([]byte)) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		var part []byte
		if i < 0 {
			part, chunk = chunk, nil
		} else {
			part, chunk = chunk[:i], chunk[i+1:]
		}
		for len(s.partial)+len(part) >= MaxPiece {
			take := MaxPiece - len(s.partial)
			s.partial = append(s.partial, part[:take]...)
			part = part[take:]
			emit(s.partial)
			s.partial = s.partial[:0]
		}
		s.partial = append(s.partial, part...)
		if i >= 0 {
			if len(s.partial) > 0 {
				emit(s.partial)
			}
			s.partial = s.partial[:0]
		}
	}
}

// Tail returns the last n lines of the log in dir (a handle from
// [OpenDir] or [OpenDirFromHome]), read from at most its last 4 MiB, and
// a [Follower] positioned at its end. A missing log has no lines.
func Tail(dir *os.File, n int) ([]string, *Follower, error) {
	fl := &Follower{dir: dir}
	f, err := openFileAt(dir, FileName, unix.O_RDONLY)
	if errors.Is(err, unix.ENOENT) {
		return nil, fl, nil
	}
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	size := st.Size()
	start := max(0, size-ReadChunk)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		f.Close()
		return nil, nil, err
	}
	if start > 0 {
		// The first line was cut by the 4 MiB window: drop its end.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	var lines []string
	var sp splitter
	sp.feed(buf, func(l []byte) {
		lines = append(lines, string(l))
		if len(lines) > 2*n+16 {
			lines = append(lines[:0], lines[len(lines)-n:]...)
		}
	})
	if len(sp.partial) > 0 {
		lines = append(lines, string(sp.partial))
		sp.partial = nil
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	fl.f, fl.off, fl.ino = f, size, inode(st)
	return lines, fl, nil
}

func inode(st os.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Ino
	}
	return 0
}

// Follower reads what is appended to the log, at most [ReadChunk] at a
// time, and follows it across a rotation.
type Follower struct {
	dir *os.File
	f   *os.File
	off int64
	ino uint64
	sp  splitter
	buf []byte
}

// Poll emits each new line (or 64 KiB piece of a line without an end)
// appended since the last call. It returns when it has caught up.
func (fl *Follower) Poll(emit func([]byte)) error {
	for {
		if fl.f == nil {
			f, err := openFileAt(fl.dir, FileName, unix.O_RDONLY)
			if errors.Is(err, unix.ENOENT) {
				return nil
			}
			if err != nil {
				return err
			}
			st, err := f.Stat()
			if err != nil {
				f.Close()
				return err
			}
			fl.f, fl.off, fl.ino = f, 0, inode(st)
		}
		if fl.buf == nil {
			fl.buf = make([]byte, ReadChunk)
		}
		n, err := fl.f.ReadAt(fl.buf, fl.off)
		if n > 0 {
			fl.off += int64(n)
			fl.sp.feed(fl.buf[:n], emit)
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		// Caught up with this file: has it been rotated away or cut?
		st, err := fl.f.Stat()
		if err == nil && st.Size() < fl.off {
			fl.off = 0
			continue
		}
		cur, err := openFileAt(fl.dir, FileName, unix.O_RDONLY)
		if err != nil {
			return nil // nothing new in its place yet
		}
		cst, err := cur.Stat()
		if err != nil || inode(cst) == fl.ino {
			cur.Close()
			return nil
		}
		fl.f.Close()
		st2, _ := cur.Stat()
		fl.f, fl.off, fl.ino = cur, 0, inode(st2)
	}
}

// Close releases the follower's file.
func (fl *Follower) Close() {
	if fl.f != nil {
		fl.f.Close()
		fl.f = nil
	}
}

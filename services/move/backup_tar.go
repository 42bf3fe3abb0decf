package move

import (
	"archive/tar"
	"fmt"
	"io"
	"time"

	"lnk.dev/lnk/internal/moveentry"
)

// entryWriter is what the sending tree writes each name it reads to: a
// move's stream (moveentry.Writer) or a backup's archive (tarEntries).
type entryWriter interface {
	Dir(path string, mode uint32) error
	File(path string, mode uint32, size int64, r io.Reader) error
	Link(path, target string) error
}

// tarEntries writes the tree's entries as a standard tar archive, each
// path checked by the move's rule, as a restore will check it.
type tarEntries struct {
	tw   *tar.Writer
	when time.Time
	buf  []byte
}

func newTarEntries(w io.Writer, when time.Time) *tarEntries {
	return &tarEntries{tw: tar.NewWriter(w), when: when.Truncate(time.Second), buf: make([]byte, copyBuf)}
}

func (t *tarEntries) header(k moveentry.Kind, path string, h *tar.Header) error {
	if _, err := moveentry.CheckPath(moveentry.PhaseSwitch, k, path); err != nil {
		return err
	}
	h.ModTime = t.when
	return t.tw.WriteHeader(h)
}

func (t *tarEntries) Dir(path string, mode uint32) error {
	return t.header(moveentry.KindDir, path, &tar.Header{Typeflag: tar.TypeDir, Name: path + "/", Mode: int64(mode & 0o777)})
}

func (t *tarEntries) Link(path, target string) error {
	return t.header(moveentry.KindLink, path, &tar.Header{Typeflag: tar.TypeSymlink, Name: path, Linkname: target, Mode: 0o777})
}

// File writes size bytes read from r: fewer is an error, and the archive
// is then never put in place.
func (t *tarEntries) File(path string, mode uint32, size int64, r io.Reader) error {
	if err := t.header(moveentry.KindFile, path, &tar.Header{Typeflag: tar.TypeReg, Name: path, Mode: int64(mode & 0o777), Size: size}); err != nil {
		return err
	}
	n, err := io.CopyBuffer(t.tw, io.LimitReader(r, size), t.buf)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%s: %d bytes read of %d: it changed while backed up", path, n, size)
	}
	return nil
}

// Close writes the archive's end.
func (t *tarEntries) Close() error { return t.tw.Close() }

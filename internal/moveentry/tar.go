package moveentry

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A backup's archives (lnk agent backup: .lnk-backup/<harness>.tar and
// Agent.tar) are standard tar files whose entries carry the same paths as
// a move's switch: home/… for the harness's state, chats/…,
// instructions/… and skills/… for the agent's own folder. The agent can
// write the folder they sit in, so a TarReader trusts none of their
// bytes: each entry passes the move's one rule (Tree, CheckPath).

// ErrArchive is an archive that is not a backup's: damaged, cut, or of
// entries a backup never holds.
var ErrArchive = errors.New("backup: not a backup archive Link reads")

// ErrArchiveLink is a link in an archive where none may be: any link,
// symbolic or hard, in Agent.tar or in a full restore.
var ErrArchiveLink = errors.New("backup: a link in the archive, which this restore refuses whole")

// TarReader reads a backup archive's entries, refusing (each with one
// line saying why): a path the move's rule refuses (ErrPath, ErrDepth,
// ErrOrder) or under an area other than those given (ErrPath); a hard
// link, always, and a symbolic one unless links are allowed
// (ErrArchiveLink); a device, pipe, sparse file or any other kind of
// entry (ErrEntry); entries whose sizes add up past the archive's own
// (ErrSize), so nothing unpacks larger than what was read; more than
// MaxEntries entries (ErrOrder); a damaged or cut archive (ErrArchive).
// Modes keep their permission bits only.
type TarReader struct {
	tr    *tar.Reader
	in    *zeroTail
	tree  *Tree
	areas []string
	links bool
	left  int64 // bytes the archive's files may still hold
	count int
	err   error
}

// NewTarReader reads an archive of size bytes from r, whose paths may lie
// only under areas (each one of the switch's), symbolic links allowed
// only when links is set.
func NewTarReader(r io.Reader, size int64, areas []string, links bool) *TarReader {
	in := &zeroTail{r: r}
	return &TarReader{tr: tar.NewReader(in), in: in, tree: NewTree(), areas: areas, links: links, left: size}
}

// zeroTail counts the zero bytes that ended what was read: an archive
// ends with two zero blocks, and one cut between its entries lacks them.
type zeroTail struct {
	r     io.Reader
	zeros int64
}

func (z *zeroTail) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	for _, c := range p[:n] {
		if c == 0 {
			z.zeros++
		} else {
			z.zeros = 0
		}
	}
	return n, err
}

// Next returns the next entry, or io.EOF once the archive ended whole.
func (r *TarReader) Next() (*Entry, error) {
	if r.err != nil {
		return nil, r.err
	}
	e, err := r.next()
	if err != nil {
		r.err = err
	}
	return e, err
}

func (r *TarReader) next() (*Entry, error) {
	h, err := r.tr.Next()
	if err == io.EOF {
		if r.in.zeros < 2*512 {
			return nil, fmt.Errorf("%w: it stops before its end", ErrArchive)
		}
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrArchive, oneLine(err))
	}
	if r.count++; r.count > MaxEntries {
		return nil, fmt.Errorf("%w: more than %d entries", ErrOrder, MaxEntries)
	}
	e := &Entry{Phase: PhaseSwitch, Path: strings.TrimSuffix(h.Name, "/"), Mode: uint32(h.Mode) & 0o777}
	switch h.Typeflag {
	case tar.TypeDir:
		e.Kind = KindDir
	case tar.TypeReg:
		e.Kind = KindFile
	case tar.TypeSymlink:
		e.Kind = KindLink
	case tar.TypeLink:
		return nil, fmt.Errorf("%w: %s is a hard link", ErrArchiveLink, quote(h.Name))
	default:
		return nil, fmt.Errorf("%w: %s is of tar type %q, which a backup never holds", ErrEntry, quote(h.Name), h.Typeflag)
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return nil, fmt.Errorf("%w: %s is a sparse file, which a backup never holds", ErrEntry, quote(h.Name))
		}
	}
	if e.Kind == KindLink && !r.links {
		return nil, fmt.Errorf("%w: %s", ErrArchiveLink, quote(h.Name))
	}
	if e.Path != h.Name && e.Kind != KindDir {
		return nil, pathErr(h.Name) // a trailing '/' on a file or link
	}
	names, err := r.tree.Add(PhaseSwitch, e.Kind, e.Path)
	if err != nil {
		return nil, err
	}
	ok := false
	for _, a := range r.areas {
		ok = ok || names[0] == a
	}
	if !ok {
		return nil, pathErr(e.Path)
	}
	switch e.Kind {
	case KindLink:
		if h.Linkname == "" || len(h.Linkname) > MaxPath || strings.ContainsRune(h.Linkname, 0) {
			return nil, fmt.Errorf("%w: the link %s has no target, or one too long", ErrPath, quote(e.Path))
		}
		e.Target = h.Linkname
	case KindFile:
		if h.Size < 0 || h.Size > r.left {
			return nil, fmt.Errorf("%w: %s says %d bytes, more than the archive holds", ErrSize, quote(e.Path), h.Size)
		}
		r.left -= h.Size
		e.Size = h.Size
	}
	return e, nil
}

// Body reads the bytes of the file Next returned last; a cut archive is
// ErrArchive.
func (r *TarReader) Body() io.Reader { return tarBody{r.tr} }

type tarBody struct{ r io.Reader }

func (b tarBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %v", ErrArchive, oneLine(err))
	}
	return n, err
}

// oneLine is err's text without control characters.
func oneLine(err error) string {
	return strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return ' '
		}
		return c
	}, err.Error())
}

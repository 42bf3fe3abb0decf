package resolve

import (
	"errors"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Version is "the file as I saw it" (file-tool.txt, The version a write
// names): the device, inode, size, modification and change times of a
// file, from fstat of the open file. Any write, by Link or anyone, changes
// at least one of them: an atomic write makes a new inode, an in-place
// write changes the size or the times.
//
// The zero Version names nothing (a write with it replaces whatever is
// there); [Absent] names a file that must not exist yet.
type Version struct {
	Dev     uint64
	Ino     uint64
	Size    int64
	MtimeNs int64
	CtimeNs int64
	absent  bool
}

// Absent is the version of a file that does not exist: a write naming it
// is refused with ErrExists if the name exists by then.
var Absent = Version{absent: true}

// IsZero reports whether v names no version at all.
func (v Version) IsZero() bool { return v == Version{} }

// IsAbsent reports whether v is [Absent].
func (v Version) IsAbsent() bool { return v.absent }

func versionOf(st *unix.Stat_t) Version {
	return Version{
		Dev:     st.Dev,
		Ino:     st.Ino,
		Size:    st.Size,
		MtimeNs: st.Mtim.Nano(),
		CtimeNs: st.Ctim.Nano(),
	}
}

// String is the version as a token a caller can hand back: "absent",
// "" for the zero version, else "v1:dev:ino:size:mtime:ctime" in hex.
func (v Version) String() string { return string(v.AppendTo(nil)) }

// AppendTo appends [Version.String]'s token to dst.
func (v Version) AppendTo(dst []byte) []byte {
	switch {
	case v.absent:
		return append(dst, "absent"...)
	case v.IsZero():
		return dst
	}
	dst = append(dst, "v1"...)
	for _, n := range [5]uint64{v.Dev, v.Ino, uint64(v.Size), uint64(v.MtimeNs), uint64(v.CtimeNs)} {
		dst = strconv.AppendUint(append(dst, ':'), n, 16)
	}
	return dst
}

// MarshalText encodes v as [Version.String] does.
func (v Version) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText decodes what [Version.MarshalText] made; anything else is
// an error.
func (v *Version) UnmarshalText(b []byte) error {
	p, err := ParseVersion(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

var errVersionSyntax = errors.New("not a version token")

// ParseVersion decodes a token from [Version.String].
func ParseVersion(s string) (Version, error) {
	switch s {
	case "absent":
		return Absent, nil
	case "":
		return Version{}, nil
	}
	rest, ok := strings.CutPrefix(s, "v1:")
	if !ok {
		return Version{}, errVersionSyntax
	}
	var n [5]uint64
	for i := range n {
		p, tail, more := strings.Cut(rest, ":")
		if more != (i < len(n)-1) {
			return Version{}, errVersionSyntax
		}
		x, err := strconv.ParseUint(p, 16, 64)
		if err != nil {
			return Version{}, errVersionSyntax
		}
		n[i], rest = x, tail
	}
	v := Version{Dev: n[0], Ino: n[1], Size: int64(n[2]), MtimeNs: int64(n[3]), CtimeNs: int64(n[4])}
	var buf [96]byte
	if string(v.AppendTo(buf[:0])) != s {
		return Version{}, errVersionSyntax // one spelling per version
	}
	return v, nil
}

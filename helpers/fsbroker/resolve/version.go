package resolve

import (
	"errors"
	"fmt"
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
func (v Version) String() string {
	switch {
	case v.absent:
		return "absent"
	case v.IsZero():
		return ""
	}
	return fmt.Sprintf("v1:%x:%x:%x:%x:%x", v.Dev, v.Ino, uint64(v.Size), uint64(v.MtimeNs), uint64(v.CtimeNs))
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
	parts := strings.Split(s, ":")
	if len(parts) != 6 || parts[0] != "v1" {
		return Version{}, errVersionSyntax
	}
	var n [5]uint64
	for i, p := range parts[1:] {
		x, err := strconv.ParseUint(p, 16, 64)
		if err != nil {
			return Version{}, errVersionSyntax
		}
		n[i] = x
	}
	v := Version{Dev: n[0], Ino: n[1], Size: int64(n[2]), MtimeNs: int64(n[3]), CtimeNs: int64(n[4])}
	if v.String() != s {
		return Version{}, errVersionSyntax // one spelling per version
	}
	return v, nil
}

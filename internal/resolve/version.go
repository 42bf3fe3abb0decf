package resolve

import (
	"errors"
	"strconv"

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
	var b [96]byte // the longest token is 2 + 5*17 bytes
	return string(v.AppendTo(b[:0]))
}

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
func ParseVersion(s string) (Version, error) { return parseVersion(s) }

// ParseVersionBytes is [ParseVersion] of a token in b, without copying
// it to a string.
func ParseVersionBytes(b []byte) (Version, error) { return parseVersion(b) }

func parseVersion[T string | []byte](s T) (Version, error) {
	switch string(s) {
	case "absent":
		return Absent, nil
	case "":
		return Version{}, nil
	}
	if len(s) < 3 || string(s[:3]) != "v1:" {
		return Version{}, errVersionSyntax
	}
	rest := s[3:]
	var n [5]uint64
	for i := range n {
		end := len(rest)
		for j := 0; j < len(rest); j++ {
			if rest[j] == ':' {
				end = j
				break
			}
		}
		if (end < len(rest)) != (i < len(n)-1) || end == 0 || end > 16 {
			return Version{}, errVersionSyntax
		}
		var x uint64
		for j := 0; j < end; j++ {
			d, ok := hexDigit(rest[j])
			if !ok {
				return Version{}, errVersionSyntax
			}
			x = x<<4 | d
		}
		n[i] = x
		if end < len(rest) {
			rest = rest[end+1:]
		}
	}
	v := Version{Dev: n[0], Ino: n[1], Size: int64(n[2]), MtimeNs: int64(n[3]), CtimeNs: int64(n[4])}
	var buf [96]byte
	if string(v.AppendTo(buf[:0])) != string(s) {
		return Version{}, errVersionSyntax // one spelling per version
	}
	return v, nil
}

// hexDigit accepts what strconv.ParseUint(s, 16, 64) does, digit by
// digit: 0-9, a-f, A-F (the one-spelling check then refuses capitals).
func hexDigit(c byte) (uint64, bool) {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0'), true
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

package prompt

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/resolve"
)

// readHead reads at most max bytes of the regular file name beneath root
// (never through a link; a folder or pipe refused by resolve before a
// byte is read), and says whether there was more.
func readHead(root *resolve.Root, name string, max int) ([]byte, bool, error) {
	f, _, err := root.Open(name, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(b) > max {
		return b[:cutPoint(b, max)], true, nil
	}
	return b, false, nil
}

// cutPoint is the largest n ≤ max that cuts b at a UTF-8 boundary.
func cutPoint(b []byte, max int) int {
	n := max
	for n > 0 && n > max-utf8.UTFMax && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// cleanText makes a file's bytes prompt text: invalid UTF-8 replaced, NUL
// and the terminal's escape character dropped.
func cleanText(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == 0 || r == 0x1b {
			return -1
		}
		return r
	}, s)
}

// dupFile is a close-on-exec duplicate of f, for a Root of its own.
func dupFile(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the agent's folder: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

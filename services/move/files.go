package move

import (
	"io/fs"
	"os"
)

func fileOf(fd int, name string) *os.File { return os.NewFile(uintptr(fd), name) }

// fsMode is a stream's permission bits as a file mode: never setuid,
// setgid or sticky.
func fsMode(m uint32) fs.FileMode { return fs.FileMode(m & 0o777) }

package move

import (
	"io/fs"
	"os"
)

// copyBuf is the size of a file's copy buffer on either side: records of
// the sealed stream are 64 KiB, and a few at a time keep the syscalls few.
const copyBuf = 1 << 20

func fileOf(fd int, name string) *os.File { return os.NewFile(uintptr(fd), name) }

// fsMode is a stream's permission bits as a file mode: never setuid,
// setgid or sticky.
func fsMode(m uint32) fs.FileMode { return fs.FileMode(m & 0o777) }

package resolve

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// ReadFileRaw is [Root.ReadFile] — the same checks, refusals and cap —
// for a caller that serves one call at a time on one P, as lnk-file-tool
// apply does: where r's folder is on a local filesystem, its system calls
// (openat2, fstat, read, close) are raw, made without entering the Go
// scheduler's system call path. An ordinary system call entered while the
// program was idle wakes the runtime's monitor thread (sysmon), which then
// polls for a while: a few context switches and tens of µs of CPU a call,
// more than the read itself costs.
//
// A raw system call keeps its P and is invisible to the scheduler until
// it returns: nothing else runs on that P meanwhile, and a stop-the-world
// waits for it. So raw is taken only where no call can block for long:
//
//   - the folder's filesystem is one of localFS (fstatfs on r's folder,
//     asked once): every name is opened with RESOLVE_NO_XDEV, so every
//     file read is on that same filesystem. Elsewhere — NFS, CIFS, FUSE,
//     9p, overlayfs (whose lower layers may be any of these) — a lookup,
//     fstat or read may wait on a network or another process, and every
//     call here is an ordinary one, exactly as ReadFile makes it;
//   - the read's open is O_NONBLOCK and the file is read only after fstat
//     showed it regular: a FIFO or device is refused before any read;
//   - at most max+1 bytes are read (the 4 MiB apply passes), from the page
//     cache or a local disk.
//
// The forced fallback walk (no openat2) makes ordinary calls too. The
// other callers of this package (lnk-fsbroker, the kernel) serve many
// calls at once and keep [Root.ReadFile].
func (r *Root) ReadFileRaw(name string, max int64) ([]byte, Version, error) {
	if r.fd < 0 || r.fallback || !r.localFS() {
		return r.ReadFile(name, max)
	}
	return r.readFile(name, max, true)
}

// localFS are the filesystems [Root.ReadFileRaw] makes raw calls on:
// ones whose calls are answered by this kernel from memory or a local
// disk.
var localFS = []int64{
	unix.EXT4_SUPER_MAGIC, // ext2, ext3 and ext4 alike
	unix.XFS_SUPER_MAGIC,
	unix.BTRFS_SUPER_MAGIC,
	unix.F2FS_SUPER_MAGIC,
	unix.TMPFS_MAGIC,
	unix.RAMFS_MAGIC,
}

// local caches whether r's folder is on a localFS: 0 not asked yet, 1
// yes, 2 no. A Root keeps one folder, so the answer never changes.
func (r *Root) localFS() bool {
	switch atomic.LoadInt32(&r.local) {
	case 1:
		return true
	case 2:
		return false
	}
	var sf unix.Statfs_t
	yes := false
	if err := unix.Fstatfs(r.fd, &sf); err == nil {
		for _, m := range localFS {
			if int64(sf.Type) == m {
				yes = true
			}
		}
	}
	v := int32(2)
	if yes {
		v = 1
	}
	atomic.StoreInt32(&r.local, v)
	return yes
}

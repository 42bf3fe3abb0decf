package hub

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// ErrDir refuses a settings folder that is a link or not the user's alone.
var ErrDir = errors.New("not a settings folder of the user's alone")

// CheckDir takes dir only if it is a folder, not a link, owned by this
// user and reached by no one else (mode 0700 or narrower).
func CheckDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: %s is not an absolute path", ErrDir, dir)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("%w: %v", ErrDir, err)
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("%w: %s is a link", ErrDir, dir)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%w: %s is not a folder", ErrDir, dir)
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("%w: %s belongs to uid %d", ErrDir, dir, st.Uid)
	case st.Mode&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %o; others reach it", ErrDir, dir, st.Mode&0o777)
	}
	return nil
}

// toolsDir is where definitions, keys, sockets and logs live.
func toolsDir(dir string) string { return filepath.Join(dir, "sandbox", "tools") }

// machineKey reads the hub key, making it once (0600) if it is missing.
// It is never read through a link.
func machineKey(dir string) ([]byte, error) {
	tools := toolsDir(dir)
	if err := os.MkdirAll(tools, 0o700); err != nil {
		return nil, err
	}
	if err := CheckDir(tools); err != nil {
		return nil, err
	}
	p := filepath.Join(tools, ".key")
	for range 2 {
		if k, err := readKey(p); err == nil {
			return k, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		var k [32]byte
		rand.Read(k[:])
		var r [8]byte
		rand.Read(r[:])
		tmp := p + "." + hex.EncodeToString(r[:]) + ".tmp"
		if err := writeFileSync(tmp, []byte(hex.EncodeToString(k[:])), 0o600); err != nil {
			return nil, err
		}
		// Link, not rename: of two makers at once the first keeps its key.
		err := os.Link(tmp, p)
		os.Remove(tmp)
		if err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		syncDir(tools)
	}
	return readKey(p)
}

func readKey(p string) ([]byte, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	b := make([]byte, 65)
	n, _ := f.Read(b)
	k, err := hex.DecodeString(string(b[:n]))
	if err != nil || len(k) != 32 {
		return nil, fmt.Errorf("%s is not a hub key", p)
	}
	return k, nil
}

func writeFileSync(p string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// Key names what def runs as — its digest, tokens among it — keyed with
// the machine's secret, so a socket's name tests no guess of a token.
func Key(dir string, def *tooldef.Definition) (string, error) {
	k, err := machineKey(dir)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, k)
	m.Write([]byte(def.Name + "\x00" + def.Digest()))
	return hex.EncodeToString(m.Sum(nil))[:32], nil
}

// Paths are one hub's files, beside each other in sandbox/tools.
type Paths struct{ Socket, Lock, Log, Unit string }

// PathsOf names the files of the hub of name with key.
func PathsOf(dir, name, key string) Paths {
	base := filepath.Join(toolsDir(dir), name+"-"+key)
	return Paths{Socket: base + ".sock", Lock: base + ".lock", Log: base + ".log", Unit: "lnk-tool-" + name + "-" + key}
}

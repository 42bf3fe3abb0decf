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

	"lnk.dev/lnk/internal/ownerfile"
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
// Its folders are made and opened by internal/ownerfile (no link on the
// way, tools/ the owner's alone), and the key is read only as a 0600
// regular file of the owner's.
func machineKey(dir string) ([]byte, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%w: %s is not an absolute path", ErrDir, dir)
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDir, err)
	}
	defer unix.Close(dfd)
	sfd, err := ownerfile.MakeDir(dfd, "sandbox", unix.O_PATH, ownerfile.Rule{})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDir, err)
	}
	defer unix.Close(sfd)
	tfd, err := ownerfile.MakeDir(sfd, "tools", unix.O_RDONLY, ownerfile.PrivateDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDir, err)
	}
	defer unix.Close(tfd)
	p := filepath.Join(toolsDir(dir), keyName)
	for range 2 {
		if k, err := readKey(tfd); err == nil {
			return k, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		var k [32]byte
		rand.Read(k[:])
		tmp, err := ownerfile.CreateTemp(tfd, keyName, []byte(hex.EncodeToString(k[:])), ownerfile.Write{Mode: 0o600})
		if err != nil {
			return nil, err
		}
		// Link, not rename: of two makers at once the first keeps its key.
		err = unix.Linkat(tfd, tmp, tfd, keyName, 0)
		unix.Unlinkat(tfd, tmp, 0)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, &os.PathError{Op: "link", Path: p, Err: err}
		}
		if err := ownerfile.SyncDir(tfd); err != nil {
			return nil, err
		}
	}
	return readKey(tfd)
}

const keyName = ".key"

func readKey(tfd int) ([]byte, error) {
	b, err := ownerfile.ReadFile(tfd, keyName, ownerfile.Private, 64)
	if err != nil {
		return nil, err
	}
	k, err := hex.DecodeString(string(b))
	if err != nil || len(k) != 32 {
		return nil, fmt.Errorf("%s is not a hub key", keyName)
	}
	return k, nil
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

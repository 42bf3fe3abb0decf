package wayin

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// Names in the agent's settings folder.
const (
	SocketName = "wayin.sock"
	KeyFile    = "wayin.key"
	keySize    = 32
)

// NewKey writes a fresh way-in key (32 random bytes, hex, 0600, written
// whole, never through a link) in dirfd and returns it: a key from an
// earlier start of the agent proves nothing after.
func NewKey(dirfd int) ([]byte, error) {
	k := make([]byte, keySize)
	rand.Read(k)
	b := append([]byte(hex.EncodeToString(k)), '\n')
	if err := ownerfile.WriteAtomic(dirfd, KeyFile, b, ownerfile.Write{Mode: 0o600}); err != nil {
		return nil, fmt.Errorf("writing %s: %w", KeyFile, err)
	}
	return k, nil
}

// ReadKey reads the way-in key in dirfd: the owner's file, 0600, no link.
func ReadKey(dirfd int) ([]byte, error) {
	b, err := ownerfile.ReadFile(dirfd, KeyFile, ownerfile.Private, 256)
	if err != nil {
		return nil, fmt.Errorf("the agent's way-in key: %w", err)
	}
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	k, err := hex.DecodeString(string(b))
	if err != nil || len(k) != keySize {
		return nil, fmt.Errorf("the agent's way-in key (%s) is not %d bytes in hex", KeyFile, keySize)
	}
	return k, nil
}

// removeKey removes the way-in key (gone already is fine).
func removeKey(dirfd int) error {
	err := unix.Unlinkat(dirfd, KeyFile, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

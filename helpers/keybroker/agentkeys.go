package keybroker

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/secret"
)

// KeySize is an agent key's size in bytes.
const KeySize = 32

// KeyFile is what .keys/<agent id>.json holds.
type KeyFile struct {
	AgentID string `json:"agent_id"`
	Key     string `json:"key"` // base64url, unpadded
	Made    string `json:"made"`
}

// OpenKeysDir makes ~/.lnk/agents/.keys (0700) under home when missing
// and opens it, never through a link. The kernel hands it as fd 4.
func OpenKeysDir(home string) (*os.File, error) {
	lnk, err := secrets.OpenDir(home, true)
	if err != nil {
		return nil, err
	}
	defer lnk.Close()
	fd := int(lnk.Fd())
	for _, name := range []string{"agents", ".keys"} {
		if err := unix.Mkdirat(fd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("making %s: %w", name, err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("opening %s (a link is refused): %w", name, err)
		}
		if fd != int(lnk.Fd()) {
			unix.Close(fd)
		}
		fd = next
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Uid != uint32(os.Geteuid()) || st.Mode&0o077 != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("%w: ~/.lnk/agents/.keys is not yours alone (chmod 700)", secrets.ErrUnsafe)
	}
	return os.NewFile(uintptr(fd), filepath.Join(home, ".lnk", "agents", ".keys")), nil
}

// writeKey writes a fresh key for agent id into dir, atomically, 0600.
func writeKey(dir *os.File, id string, now time.Time) (*secret.Value, error) {
	raw := make([]byte, KeySize)
	rand.Read(raw)
	kf := KeyFile{AgentID: id, Key: base64.RawURLEncoding.EncodeToString(raw), Made: now.UTC().Format(time.RFC3339)}
	data, _ := json.Marshal(kf)
	data = append(data, '\n')
	defer clear(data)
	key, err := secret.New(raw)
	if err != nil {
		return nil, err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := fmt.Sprintf(".%s.%x", id, rnd)
	fd, err := unix.Openat(int(dir.Fd()), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		key.Destroy()
		return nil, fmt.Errorf("writing the key of %s: %w", id, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(int(dir.Fd()), tmp, int(dir.Fd()), id+".json")
	}
	if werr != nil {
		unix.Unlinkat(int(dir.Fd()), tmp, 0)
		key.Destroy()
		return nil, fmt.Errorf("writing the key of %s: %w", id, werr)
	}
	dir.Sync()
	return key, nil
}

// readKey reads agent id's key back from dir (after a broker restart),
// never through a link, refusing a file others may read.
func readKey(dir *os.File, id string) (*secret.Value, error) {
	fd, err := unix.Openat(int(dir.Fd()), id+".json", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: no key for agent %s this start", errNoKey, id)
	}
	f := os.NewFile(uintptr(fd), id+".json")
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Uid != uint32(os.Geteuid()) || st.Mode&0o077 != 0 {
		return nil, fmt.Errorf("%w: the key file of agent %s is not a 0600 file of the owner's", errRefused, id)
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	defer clear(data)
	if err != nil {
		return nil, err
	}
	var kf KeyFile
	if err := json.Unmarshal(data, &kf); err != nil || kf.AgentID != id {
		return nil, fmt.Errorf("%w: the key file of agent %s is malformed", errRefused, id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(kf.Key)
	if err != nil || len(raw) != KeySize {
		return nil, fmt.Errorf("%w: the key file of agent %s is malformed", errRefused, id)
	}
	return secret.New(raw)
}

// removeKey removes agent id's key file.
func removeKey(dir *os.File, id string) error {
	err := unix.Unlinkat(int(dir.Fd()), id+".json", 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// StartFiles opens what the kernel hands lnk-keybroker after its channel:
// the keys folder (fd 4) and, when there is one, secrets.toml (fd 5),
// each never through a link. The caller closes them once handed.
func StartFiles(home string) ([]*os.File, error) {
	keys, err := OpenKeysDir(home)
	if err != nil {
		return nil, err
	}
	dir, err := secrets.OpenDir(home, false)
	if err != nil {
		keys.Close()
		return nil, err
	}
	defer dir.Close()
	sf, err := secrets.OpenFile(dir)
	if err != nil {
		keys.Close()
		return nil, err
	}
	if sf == nil {
		return []*os.File{keys}, nil
	}
	return []*os.File{keys, sf}, nil
}

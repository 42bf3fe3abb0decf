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

	"lnk.dev/lnk/internal/ownerfile"

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
	agents, err := ownerfile.MakeDir(int(lnk.Fd()), "agents", unix.O_PATH, ownerfile.Rule{})
	if err != nil {
		return nil, fmt.Errorf("opening ~/.lnk/agents: %w", err)
	}
	defer unix.Close(agents)
	fd, err := ownerfile.MakeDir(agents, ".keys", unix.O_RDONLY, ownerfile.PrivateDir)
	if errors.Is(err, ownerfile.ErrNotOwners) {
		return nil, fmt.Errorf("%w: ~/.lnk/agents/.keys is not yours alone (chmod 700)", secrets.ErrUnsafe)
	}
	if err != nil {
		return nil, fmt.Errorf("opening ~/.lnk/agents/.keys: %w", err)
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
	// Atomic, never fsynced: the key is one start's, and no start
	// outlives the machine's crash; a file torn by one is refused as
	// malformed (readKey), and the next start writes it anew. A broker
	// that restarts reads it back from the page cache. Two fsyncs here
	// would be paid by every sandbox's start.
	if err := ownerfile.WriteAtomic(int(dir.Fd()), id+".json", data, ownerfile.Write{Mode: 0o600, NoSync: true}); err != nil {
		key.Destroy()
		return nil, fmt.Errorf("writing the key of %s: %w", id, err)
	}
	return key, nil
}

// readKey reads agent id's key back from dir (after a broker restart),
// never through a link, refusing a file others may read.
func readKey(dir *os.File, id string) (*secret.Value, error) {
	f, err := ownerfile.OpenFile(int(dir.Fd()), id+".json", ownerfile.Private)
	if errors.Is(err, ownerfile.ErrNotOwners) {
		return nil, fmt.Errorf("%w: the key file of agent %s is not a 0600 file of the owner's", errRefused, id)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: no key for agent %s this start", errNoKey, id)
	}
	defer f.Close()
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

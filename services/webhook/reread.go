package webhook

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/secret"
)

// The listener opens webhooks.json and secrets.toml at every post (never
// through a link, the owner's alone) and parses them again whenever
// either is not the very file it parsed last: another inode, size,
// modification or change time. A roll, roll --done or remove, each an
// atomic rewrite, is so taken at the next post, with no restart, and an
// unchanged file is not parsed again.

// fileID is what tells one version of a file from another.
type fileID struct {
	dev, ino, size      uint64
	mtimeSec, mtimeNsec int64
	ctimeSec, ctimeNsec int64
	present             bool
}

func idOf(f *os.File) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, err
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: uint64(st.Size), mtimeSec: st.Mtim.Sec, mtimeNsec: st.Mtim.Nsec,
		ctimeSec: st.Ctim.Sec, ctimeNsec: st.Ctim.Nsec, present: true}, nil
}

// settingsCache is the agent's webhooks.json as last parsed.
type settingsCache struct {
	mu       sync.Mutex
	id       fileID
	settings *Settings
}

// load reads webhooks.json in dirfd, parsing it only when it changed.
// The Settings returned are shared: never changed by a caller.
func (c *settingsCache) load(dirfd int) (*Settings, error) {
	f, err := ownerfile.OpenFile(dirfd, SettingsName, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true})
	if errors.Is(err, unix.ENOENT) {
		return &Settings{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", SettingsName, err)
	}
	defer f.Close()
	id, err := idOf(f)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settings != nil && c.id == id {
		return c.settings, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSettings+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", SettingsName, err)
	}
	if len(data) > maxSettings {
		return nil, fmt.Errorf("%s is larger than %d bytes", SettingsName, maxSettings)
	}
	s, err := parseSettings(data)
	if err != nil {
		return nil, err
	}
	c.id, c.settings = id, s
	return s, nil
}

// secretsCache holds, for the version of secrets.toml last read, copies
// of the secrets of the agent's webhooks posted to since: never another
// secret of the owner's. A version replaced is zeroed once no check uses
// it any longer.
type secretsCache struct {
	mu   sync.Mutex
	snap *secretsSnap
}

type secretsSnap struct {
	id    fileID
	refs  int
	stale bool
	hooks map[string][2]*secret.Value // hook id → current, previous (or nil)
}

func (s *secretsSnap) destroy() {
	for _, v := range s.hooks {
		v[0].Destroy()
		v[1].Destroy()
	}
}

// release ends a use of s.
func (c *secretsCache) release(s *secretsSnap) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.refs--
	if s.stale && s.refs == 0 {
		s.destroy()
	}
}

// close zeroes what no check uses; the rest is zeroed by its release.
func (c *secretsCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != nil {
		c.snap.stale = true
		if c.snap.refs == 0 {
			c.snap.destroy()
		}
		c.snap = nil
	}
}

// get is webhook h's secrets as secrets.toml holds them now: the
// current one and, until PreviousUntil (from h, read at this post), the
// previous one. The caller calls release once it no longer uses them.
func (c *secretsCache) get(home string, h Hook, now time.Time) (Secrets, func(), error) {
	dir, err := secrets.OpenDir(home, false)
	if err != nil {
		return Secrets{}, nil, err
	}
	defer dir.Close()
	f, err := secrets.OpenFile(dir)
	if err != nil {
		return Secrets{}, nil, err
	}
	if f == nil {
		return Secrets{}, nil, fmt.Errorf("%w: %s", secrets.ErrNoSecret, SecretName(h.ID))
	}
	defer f.Close()
	id, err := idOf(f)
	if err != nil {
		return Secrets{}, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil || c.snap.id != id {
		if c.snap != nil {
			c.snap.stale = true
			if c.snap.refs == 0 {
				c.snap.destroy()
			}
		}
		c.snap = &secretsSnap{id: id, hooks: map[string][2]*secret.Value{}}
	}
	s := c.snap
	vals, ok := s.hooks[h.ID]
	if !ok {
		if vals, err = readHookSecrets(f, h.ID); err != nil {
			return Secrets{}, nil, err
		}
		s.hooks[h.ID] = vals
	}
	out := Secrets{Current: vals[0]}
	if vals[1] != nil && h.PreviousUntil != nil && now.Before(*h.PreviousUntil) {
		out.Previous, out.PreviousUntil = vals[1], *h.PreviousUntil
	}
	s.refs++
	return out, func() { c.release(s) }, nil
}

// readHookSecrets reads hook's two secrets from f, copied out of the
// parsed file, which is zeroed.
func readHookSecrets(f *os.File, hook string) ([2]*secret.Value, error) {
	file, err := secrets.Read(f)
	if err != nil {
		return [2]*secret.Value{}, err
	}
	defer file.Destroy()
	cur, ok := file.Secrets[SecretName(hook)]
	if !ok {
		return [2]*secret.Value{}, fmt.Errorf("%w: %s", secrets.ErrNoSecret, SecretName(hook))
	}
	var out [2]*secret.Value
	if out[0], err = clone(cur.Value); err != nil {
		return out, err
	}
	if prev, ok := file.Secrets[previousName(hook)]; ok {
		if out[1], err = clone(prev.Value); err != nil {
			out[0].Destroy()
			return [2]*secret.Value{}, err
		}
	}
	return out, nil
}

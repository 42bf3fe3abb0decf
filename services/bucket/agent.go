package bucket

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// Agent is one agent's buckets: where its settings are, and the rclone
// program its calls run (empty: rclone on PATH).
type Agent struct {
	Home   string // the owner's HOME, its links resolved
	Name   string
	ID     string
	Rclone string // rclone's path; empty finds it on PATH
	// Resolver looks endpoints' names up at each push and pull
	// (route.go); net.DefaultResolver if nil.
	Resolver Resolver
	caCert   string // tests only: a CA file in rclone's HOME its TLS trusts
	confRel  string // Config folder, relative to Home
}

// LoadAgent is agent name's buckets under home.
func LoadAgent(home, name string) (*Agent, error) {
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(home)
	if err != nil {
		return nil, fmt.Errorf("HOME: %w", err)
	}
	l := caps.Layout{Home: real}
	rel, err := filepath.Rel(real, l.ConfigDir(a.Name))
	if err != nil {
		return nil, err
	}
	return &Agent{Home: real, Name: a.Name, ID: a.ID, confRel: rel}, nil
}

// configDir opens the agent's Config folder: through no link, the
// owner's, reached by no group or other.
func (a *Agent) configDir() (int, error) {
	fd, err := ownerfile.OpenPath(filepath.Join(a.Home, a.confRel), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return -1, fmt.Errorf("opening agent %s's Config (a link is never followed): %w", a.Name, err)
	}
	if err := ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("agent %s's Config: %w", a.Name, err)
	}
	return fd, nil
}

// confRule is rclone.conf: a regular file of the owner's, 600 or
// stricter, with one name (a hard link to it from a place an agent
// reaches would be refused).
var confRule = ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}

// openConf opens rclone.conf in the Config folder cfg; missing is
// (nil, nil).
func openConf(cfg int) (*os.File, error) {
	f, err := ownerfile.OpenFile(cfg, ConfName, confRule)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", ConfName, err)
	}
	return f, nil
}

// readConf reads and parses rclone.conf from f (nil: no buckets).
func readConf(f *os.File) (*conf, error) {
	if f == nil {
		return &conf{}, nil
	}
	data := make([]byte, maxConf+1)
	defer clear(data)
	n, err := f.ReadAt(data, 0)
	if n > maxConf {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrConf, maxConf)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", ConfName, err)
	}
	return parseConf(data[:n])
}

// load reads the agent's buckets, with its rclone.conf left open for a
// child (nil when there is none). The caller closes it and destroys c.
func (a *Agent) load() (c *conf, f *os.File, err error) {
	cfg, err := a.configDir()
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(cfg)
	if f, err = openConf(cfg); err != nil {
		return nil, nil, err
	}
	if c, err = readConf(f); err != nil {
		if f != nil {
			f.Close()
		}
		return nil, nil, err
	}
	return c, f, nil
}

// change reads the agent's buckets, lets f change them, and writes them
// back atomically (rclone.conf, 600, through the Config folder's
// handle), holding an exclusive lock on the Config folder throughout, so
// two changes at once each see the other's.
func (a *Agent) change(f func(c *conf) error) error {
	cfg, err := a.configDir()
	if err != nil {
		return err
	}
	defer unix.Close(cfg)
	if err := unix.Flock(cfg, unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking agent %s's Config: %w", a.Name, err)
	}
	cf, err := openConf(cfg)
	if err != nil {
		return err
	}
	c, err := readConf(cf)
	if cf != nil {
		cf.Close()
	}
	if err != nil {
		return err
	}
	defer c.destroy()
	if err := f(c); err != nil {
		return err
	}
	data := c.encode()
	defer clear(data)
	return ownerfile.WriteAtomic(cfg, ConfName, data, ownerfile.Write{Mode: 0o600})
}

// rcloneHome opens (making it 700 where missing) the rclone child's
// HOME, ~/.lnk/agents/<agent id>/rclone.
func (a *Agent) rcloneHome() (*os.File, error) {
	return ownerdir.Open(a.Home, ".lnk", "agents", a.ID, caps.RcloneHome)
}

// runner is a runner for a's buckets: rclone found, its HOME made.
func (a *Agent) runner(conf *os.File, c *conf) (*runner, *os.File, error) {
	prog, err := findRclone(a.Rclone)
	if err != nil {
		return nil, nil, err
	}
	h, err := a.rcloneHome()
	if err != nil {
		return nil, nil, err
	}
	r := &runner{program: prog, home: h.Name(), conf: conf, caCert: a.caCert}
	if c != nil {
		for _, e := range c.entries {
			r.hide = append(r.hide, e.secretKey.Bytes())
			if e.obscured != nil {
				r.hide = append(r.hide, e.obscured.Bytes())
			}
		}
	}
	return r, h, nil
}

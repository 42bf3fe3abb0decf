package bucket

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// ReadConf is the agent's rclone.conf as it is here, for a move to carry:
// read through the same checks as every use of it (the Config folder and
// the file the owner's, reached through no link, 600, one name) and
// parsed as Link writes it, so a file of another form never leaves. No
// file is (nil, nil). The caller clears the bytes.
func (a *Agent) ReadConf() ([]byte, error) {
	cfg, err := a.configDir()
	if err != nil {
		return nil, err
	}
	defer unix.Close(cfg)
	f, err := openConf(cfg)
	if err != nil || f == nil {
		return nil, err
	}
	defer f.Close()
	data, err := readAllAt(f)
	if err != nil {
		return nil, err
	}
	if err := CheckConf(data, a.ID); err != nil {
		clear(data)
		return nil, err
	}
	return data, nil
}

// CheckConf refuses data unless it is an rclone.conf in the one form
// Link writes, each bucket's folder in its S3 bucket the agent id's own:
// a conf that came from elsewhere may not point an agent at another
// agent's folder.
func CheckConf(data []byte, id string) error {
	c, err := parseConf(data)
	if err != nil {
		return err
	}
	defer c.destroy()
	for _, e := range c.entries {
		if e.Folder != id {
			return fmt.Errorf("%w: bucket [%s]'s folder is another agent's", ErrConf, e.Name)
		}
	}
	return nil
}

// PutConf writes data, checked by CheckConf, as the agent's rclone.conf
// (600, atomically, through the Config folder's handle, under the lock
// every change of it holds). It returns what undoes it: the file as it
// was put back, or, when there was none, the new one removed.
func (a *Agent) PutConf(data []byte) (func() error, error) {
	if err := CheckConf(data, a.ID); err != nil {
		return nil, err
	}
	// The owner's --private-host marks are for buckets the owner added
	// here: a received conf's buckets reach only the internet.
	if err := a.clearPrivateHosts(); err != nil {
		return nil, err
	}
	cfg, err := a.configDir()
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(cfg, unix.LOCK_EX); err != nil {
		unix.Close(cfg)
		return nil, fmt.Errorf("locking agent %s's Config: %w", a.Name, err)
	}
	old, err := a.oldConf(cfg)
	if err == nil {
		err = ownerfile.WriteAtomic(cfg, ConfName, data, ownerfile.Write{Mode: 0o600})
	}
	unix.Close(cfg) // the lock with it
	if err != nil {
		clear(old)
		return nil, err
	}
	return func() error {
		defer clear(old)
		cfg, err := a.configDir()
		if err != nil {
			return err
		}
		defer unix.Close(cfg)
		if err := unix.Flock(cfg, unix.LOCK_EX); err != nil {
			return fmt.Errorf("locking agent %s's Config: %w", a.Name, err)
		}
		if old == nil {
			if err := unix.Unlinkat(cfg, ConfName, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("removing agent %s's %s: %w", a.Name, ConfName, err)
			}
			return nil
		}
		return ownerfile.WriteAtomic(cfg, ConfName, old, ownerfile.Write{Mode: 0o600})
	}, nil
}

// oldConf is rclone.conf's bytes in cfg as they are (nil: none), kept
// whatever their form to be put back as they were.
func (a *Agent) oldConf(cfg int) ([]byte, error) {
	f, err := openConf(cfg)
	if err != nil || f == nil {
		return nil, err
	}
	defer f.Close()
	return readAllAt(f)
}

// DeleteConf removes the agent's rclone.conf, its keys and password, as
// it leaves this machine; none is no error.
func (a *Agent) DeleteConf() error {
	cfg, err := a.configDir()
	if err != nil {
		return err
	}
	defer unix.Close(cfg)
	if err := unix.Flock(cfg, unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking agent %s's Config: %w", a.Name, err)
	}
	if err := unix.Unlinkat(cfg, ConfName, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing agent %s's %s: %w", a.Name, ConfName, err)
	}
	return a.clearPrivateHosts()
}

// readAllAt is the whole of rclone.conf open as f, refused past maxConf.
func readAllAt(f *os.File) ([]byte, error) {
	data := make([]byte, maxConf+1)
	n, err := f.ReadAt(data, 0)
	if n > maxConf {
		clear(data)
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrConf, maxConf)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		clear(data)
		return nil, fmt.Errorf("reading %s: %w", ConfName, err)
	}
	return data[:n], nil
}

package bucket

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// PrivateFile is the owner's list of the agent's buckets whose endpoint
// may be on the owner's own network (`lnk agent bucket add …
// --private-host`), in ~/.lnk/agents/<agent id>/: Link's own settings,
// which no sandbox reaches and no move carries (rclone.conf, in the
// agent's Config, is carried; this is not). One line a bucket: its name
// and the exact endpoint it was added with, so a bucket of that name
// at another endpoint is not allowed by it.
const PrivateFile = "bucket-private-hosts"

// maxPrivate bounds the file: a line for each of the most buckets.
const maxPrivate = maxBuckets * 512

// privateRule is the file: a regular file of the owner's, 600 or
// stricter, with one name.
var privateRule = ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}

// settingsDir opens (making it 700 where missing) ~/.lnk/agents/<id>.
func (a *Agent) settingsDir() (int, error) {
	f, err := ownerdir.Open(a.Home, ".lnk", "agents", a.ID)
	if err != nil {
		return -1, fmt.Errorf("agent %s's settings in ~/.lnk: %w", a.Name, err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		return -1, err
	}
	unix.CloseOnExec(fd)
	return fd, nil
}

// parsePrivate reads the file's lines, strictly: each a bucket name and
// an endpoint as CheckEndpoint writes it, no name twice. Anything else
// refuses the file whole (and with it every push and pull of a bucket
// marked there, never one judged as allowed).
func parsePrivate(data []byte) (map[string]string, error) {
	out := map[string]string{}
	if len(data) > maxPrivate {
		return nil, fmt.Errorf("%s: larger than %d bytes", PrivateFile, maxPrivate)
	}
	s := string(data)
	if s != "" && !strings.HasSuffix(s, "\n") {
		return nil, fmt.Errorf("%s: its last line is unfinished", PrivateFile)
	}
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if s == "" {
			break
		}
		name, ep, ok := strings.Cut(line, " ")
		if !ok || CheckName(name) != nil {
			return nil, fmt.Errorf("%s line %d: not a bucket name and an endpoint", PrivateFile, i+1)
		}
		if got, err := CheckEndpoint(ep); err != nil || got != ep {
			return nil, fmt.Errorf("%s line %d: not an endpoint as Link writes it", PrivateFile, i+1)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s line %d: bucket %s twice", PrivateFile, i+1, name)
		}
		if len(out) >= maxBuckets {
			return nil, fmt.Errorf("%s: more than %d buckets", PrivateFile, maxBuckets)
		}
		out[name] = ep
	}
	return out, nil
}

// encodePrivate is m as the file holds it, in name order.
func encodePrivate(m map[string]string) []byte {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + " " + m[n] + "\n")
	}
	return []byte(b.String())
}

// readPrivate is the file in dir (missing: none).
func readPrivate(dir int) (map[string]string, error) {
	data, err := ownerfile.ReadFile(dir, PrivateFile, privateRule, maxPrivate)
	if errors.Is(err, unix.ENOENT) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", PrivateFile, err)
	}
	return parsePrivate(data)
}

// privateHosts is the owner's marks: bucket name → the endpoint marked.
func (a *Agent) privateHosts() (map[string]string, error) {
	dir, err := a.settingsDir()
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	return readPrivate(dir)
}

// isPrivateHost reports whether the owner marked e, at its endpoint
// as it is now, --private-host. An error (the file unreadable, or not
// in Link's form) is returned, and the caller refuses.
func (a *Agent) isPrivateHost(e *entry) (bool, error) {
	m, err := a.privateHosts()
	if err != nil {
		return false, err
	}
	ep, ok := m[e.Name]
	return ok && ep == e.Endpoint, nil
}

// changePrivate reads the marks, lets f change them and writes them
// back atomically (600, through the folder's handle), under an
// exclusive lock on the folder.
func (a *Agent) changePrivate(f func(m map[string]string)) error {
	dir, err := a.settingsDir()
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Flock(dir, unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking agent %s's settings: %w", a.Name, err)
	}
	m, err := readPrivate(dir)
	if err != nil {
		return err
	}
	before := string(encodePrivate(m))
	f(m)
	after := encodePrivate(m)
	if string(after) == before {
		return nil
	}
	return ownerfile.WriteAtomic(dir, PrivateFile, after, ownerfile.Write{Mode: 0o600})
}

// setPrivateHost marks bucket name at endpoint ep --private-host (on),
// or takes its mark away.
func (a *Agent) setPrivateHost(name, ep string, on bool) error {
	return a.changePrivate(func(m map[string]string) {
		if on {
			m[name] = ep
		} else {
			delete(m, name)
		}
	})
}

// clearPrivateHosts takes every mark away: a received rclone.conf's
// buckets are the sender's, and reach only the internet here.
func (a *Agent) clearPrivateHosts() error {
	return a.changePrivate(func(m map[string]string) { clear(m) })
}

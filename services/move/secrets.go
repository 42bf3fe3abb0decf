package move

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/services/bucket"
)

// openSecrets opens the switch's secrets, sealed apart to key. An empty
// blob is no secrets.
func openSecrets(blob []byte, key *stream.PrivateKey) (*secrets.File, error) {
	if len(blob) == 0 {
		return &secrets.File{Secrets: map[string]*secrets.Entry{}}, nil
	}
	text, err := openSealed(blob, key, "the switch's secrets")
	defer clear(text)
	if err != nil {
		return nil, err
	}
	return secrets.Parse(text)
}

// openBuckets opens the switch's rclone.conf, sealed apart to key, and
// checks it with services/bucket's one parser: a file not in the form
// Link writes, or with a bucket's folder not agent id's, refuses the
// whole stream. An empty blob is no buckets (nil).
func openBuckets(blob []byte, key *stream.PrivateKey, id string) ([]byte, error) {
	if len(blob) == 0 {
		return nil, nil
	}
	text, err := openSealed(blob, key, "the switch's "+bucket.ConfName)
	if err != nil {
		clear(text)
		return nil, err
	}
	if len(text) == 0 {
		return nil, fmt.Errorf("%w: the switch's %s is sealed empty", moveentry.ErrFormat, bucket.ConfName)
	}
	if err := bucket.CheckConf(text, id); err != nil {
		clear(text)
		return nil, fmt.Errorf("the switch's %s: %w", bucket.ConfName, err)
	}
	return text, nil
}

// openSealed opens blob, what, sealed to key, within a settings blob's
// limit. The caller clears the bytes.
func openSealed(blob []byte, key *stream.PrivateKey, what string) ([]byte, error) {
	sr, err := stream.NewReader(bytes.NewReader(blob), key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	text, err := io.ReadAll(io.LimitReader(sr, moveentry.MaxSettings+1))
	if err != nil {
		return text, fmt.Errorf("%s: %w", what, err)
	}
	if len(text) > moveentry.MaxSettings {
		return text, fmt.Errorf("%w: %s", moveentry.ErrSize, what)
	}
	return text, nil
}

// mergeSecrets grants the secrets that came to agent id here: a secret
// new here is kept with its value; one here already, with the same value
// and host, is granted to it too; one here with another value or host
// keeps this machine's, and is named. record is told, under the secrets'
// lock and before anything is written, each secret it adds and each it
// grants: what unmergeSecrets undoes; an error from it writes nothing.
func mergeSecrets(home, id string, in *secrets.File, note func(string), record func(added, granted []string) error) error {
	return secrets.Update(home, func(f *secrets.File) error {
		var added, granted []string
		for name, e := range in.Secrets {
			here, ok := f.Secrets[name]
			if !ok {
				c := *e
				c.Agents = []string{id}
				f.Secrets[name] = &c
				added = append(added, name)
				continue
			}
			if here.InternetHost != e.InternetHost || !here.Value.Equal(e.Value.Bytes()) {
				note(fmt.Sprintf("secret %s is left out: one of that name here has another value or host, and is kept", name))
				continue
			}
			if !here.GrantedTo(id) {
				here.Agents = append(here.Agents, id)
				sort.Strings(here.Agents)
				granted = append(granted, name)
			}
		}
		sort.Strings(added)
		sort.Strings(granted)
		return record(added, granted)
	})
}

// unmergeSecrets undoes mergeSecrets: each secret it added removed (one
// by that name granted to another agent too is not the one it added, and
// is kept), each grant it added taken off. Undoing twice, or what was
// never written, changes nothing.
func unmergeSecrets(home, id string, added, granted []string) error {
	if len(added) == 0 && len(granted) == 0 {
		return nil
	}
	return secrets.Update(home, func(f *secrets.File) error {
		for _, name := range added {
			if e := f.Secrets[name]; e != nil && len(e.Agents) == 1 && e.Agents[0] == id {
				e.Value.Destroy()
				delete(f.Secrets, name)
			}
		}
		for _, name := range granted {
			if e := f.Secrets[name]; e != nil {
				e.Agents = slices.DeleteFunc(e.Agents, func(a string) bool { return a == id })
			}
		}
		return nil
	})
}

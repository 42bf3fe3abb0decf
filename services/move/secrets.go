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
)

// openSecrets opens the switch's secrets, sealed apart to key. An empty
// blob is no secrets.
func openSecrets(blob []byte, key *stream.PrivateKey) (*secrets.File, error) {
	if len(blob) == 0 {
		return &secrets.File{Secrets: map[string]*secrets.Entry{}}, nil
	}
	sr, err := stream.NewReader(bytes.NewReader(blob), key)
	if err != nil {
		return nil, fmt.Errorf("the switch's secrets: %w", err)
	}
	text, err := io.ReadAll(io.LimitReader(sr, moveentry.MaxSettings+1))
	defer clear(text)
	if err != nil {
		return nil, fmt.Errorf("the switch's secrets: %w", err)
	}
	if len(text) > moveentry.MaxSettings {
		return nil, fmt.Errorf("%w: the switch's secrets", moveentry.ErrSize)
	}
	return secrets.Parse(text)
}

// mergeSecrets grants the secrets that came to agent id here: a secret
// new here is kept with its value; one here already, with the same value
// and host, is granted to it too; one here with another value or host
// keeps this machine's, and is named. It returns what undoes it: each
// secret it added removed, each grant it added taken off.
func mergeSecrets(home, id string, in *secrets.File, note func(string)) (func() error, error) {
	if len(in.Secrets) == 0 {
		return func() error { return nil }, nil
	}
	var added, granted []string
	err := secrets.Update(home, func(f *secrets.File) error {
		added, granted = nil, nil
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
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func() error {
		return secrets.Update(home, func(f *secrets.File) error {
			for _, name := range added {
				if e := f.Secrets[name]; e != nil {
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
	}, nil
}

package move

import (
	"bytes"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/services/bucket"
)

// settings reads agent a's Link settings for the switch's first line:
// its agent.toml and sandbox.toml, and the secrets granted to its ID and
// its buckets' rclone.conf, each sealed apart to the same receiver.
func settings(home string, l caps.Layout, a *caps.Agent, to *stream.PublicKey) (*moveentry.Settings, error) {
	cfg, err := ownerfile.OpenPath(l.ConfigDir(a.Name), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("opening agent %s's Config: %w", a.Name, err)
	}
	defer unix.Close(cfg)
	var s moveentry.Settings
	if s.Agent, err = ownerfile.ReadFile(cfg, "agent.toml", ownerfile.Private, moveentry.MaxSettings); err != nil {
		return nil, fmt.Errorf("reading agent %s's agent.toml: %w", a.Name, err)
	}
	if s.Sandbox, err = ownerfile.ReadFile(cfg, "sandbox.toml", ownerfile.Private, moveentry.MaxSettings); err != nil {
		return nil, fmt.Errorf("reading agent %s's sandbox.toml: %w", a.Name, err)
	}
	if s.Secrets, err = sealSecrets(home, a.ID, to); err != nil {
		return nil, err
	}
	if s.Buckets, err = sealBuckets(home, a.Name, to); err != nil {
		return nil, err
	}
	return &s, nil
}

// sealSecrets seals the secrets granted to agent id, as a secrets.toml
// granting them to it alone, to the receiver's key.
func sealSecrets(home, id string, to *stream.PublicKey) ([]byte, error) {
	all, err := secrets.Load(home)
	if err != nil {
		return nil, fmt.Errorf("reading ~/.lnk/secrets.toml: %w", err)
	}
	defer all.Destroy()
	mine := &secrets.File{Secrets: map[string]*secrets.Entry{}}
	for name, e := range all.Secrets {
		if e.GrantedTo(id) {
			c := *e
			c.Agents = []string{id}
			mine.Secrets[name] = &c
		}
	}
	text := mine.Encode()
	defer clear(text)
	return seal(text, to, "agent "+id+"'s secrets")
}

// sealBuckets seals agent name's rclone.conf, read and checked by
// services/bucket's own reader, to the receiver's key; no file is an
// empty blob.
func sealBuckets(home, name string, to *stream.PublicKey) ([]byte, error) {
	b, err := bucket.LoadAgent(home, name)
	if err != nil {
		return nil, err
	}
	text, err := b.ReadConf()
	if errors.Is(err, bucket.ErrConf) {
		return nil, &refusal.Refusal{Reason: fmt.Sprintf("agent %s's buckets can't move: %s", name, oneLine(err)), Rule: "bucket-conf",
			Hint: fmt.Sprintf("remove its Config/%s, then lnk agent bucket add %s NAME … for each bucket again", bucket.ConfName, name), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("agent %s's buckets: %w", name, err)
	}
	if text == nil {
		return nil, nil
	}
	defer clear(text)
	return seal(text, to, "agent "+name+"'s "+bucket.ConfName)
}

// seal seals text, what, to the receiver's key, within a settings blob's
// limit.
func seal(text []byte, to *stream.PublicKey, what string) ([]byte, error) {
	var out bytes.Buffer
	w, err := stream.NewWriter(&out, to)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(text); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if out.Len() > moveentry.MaxSettings {
		return nil, fmt.Errorf("%s are past the %d bytes a move carries", what, moveentry.MaxSettings)
	}
	return out.Bytes(), nil
}

package bucket

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/secret"
)

// ErrNoBucket is returned, wrapped, for a bucket name the agent has not.
var ErrNoBucket = errors.New("no such bucket")

// ErrExists refuses adding a bucket name the agent has already.
var ErrExists = refusal.Sentinel("bucket-exists", "the agent has a bucket of that name")

// New is a bucket to add: what Link shows of it, and its access key pair
// (the secret key read from stdin or asked, never from a flag). With
// Encrypt, Password is the crypt password, or nil for 32 random bytes.
type New struct {
	Name, Endpoint, S3Bucket, Region string
	Encrypt                          bool
	// PrivateHost lets the endpoint's name resolve to the owner's own
	// network (private, CGNAT, link-local; never loopback, this
	// machine's own or metadata): kept in Link's own settings.
	PrivateHost bool
	KeyID       string
	SecretKey   *secret.Value
	Password    *secret.Value
}

// List is the agent's buckets, in name order, without a secret.
func (a *Agent) List() ([]Bucket, error) {
	c, f, err := a.load()
	if err != nil {
		return nil, err
	}
	if f != nil {
		f.Close()
	}
	defer c.destroy()
	marks, err := a.privateHosts()
	if err != nil {
		return nil, err
	}
	out := []Bucket{}
	for _, e := range c.entries {
		b := e.Bucket
		b.PrivateHost = marks[e.Name] == e.Endpoint
		out = append(out, b)
	}
	return out, nil
}

// Add checks n and keeps it in the agent's rclone.conf: the endpoint as
// CheckEndpoint writes it, the agent's ID its folder in the S3 bucket,
// and with Encrypt a crypt password (n.Password, or 32 random bytes)
// obscured by rclone itself, given on its stdin. Nothing is written
// when a check fails.
func (a *Agent) Add(ctx context.Context, n New) (Bucket, error) {
	if err := CheckName(n.Name); err != nil {
		return Bucket{}, err
	}
	ep, err := CheckEndpoint(n.Endpoint)
	if err != nil {
		return Bucket{}, err
	}
	if err := CheckS3Bucket(n.S3Bucket); err != nil {
		return Bucket{}, err
	}
	if err := CheckRegion(n.Region); err != nil {
		return Bucket{}, err
	}
	if n.SecretKey == nil {
		return Bucket{}, errors.New("no secret access key given")
	}
	if err := checkKeys(n.KeyID, n.SecretKey.Bytes()); err != nil {
		return Bucket{}, err
	}
	sk, err := secret.New(bytes.Clone(n.SecretKey.Bytes()))
	if err != nil {
		return Bucket{}, err
	}
	e := &entry{Bucket: Bucket{Name: n.Name, Endpoint: ep, S3Bucket: n.S3Bucket, Region: n.Region, Folder: a.ID, Encrypted: n.Encrypt}, keyID: n.KeyID, secretKey: sk}
	if n.Encrypt {
		// Obscured before the lock: rclone is a child, and a change
		// waits for no child.
		if e.obscured, err = a.obscure(ctx, n.Password); err != nil {
			e.destroy()
			return Bucket{}, err
		}
	}
	added := false
	err = a.change(func(c *conf) error {
		if _, old := c.find(n.Name); old != nil {
			return &refusal.Refusal{Reason: fmt.Sprintf("agent %s has a bucket %s already", a.Name, n.Name), Rule: "bucket-exists",
				Hint: fmt.Sprintf("lnk agent bucket remove %s %s, then add it again", a.Name, n.Name), Err: ErrExists}
		}
		if len(c.entries) >= maxBuckets {
			return fmt.Errorf("agent %s has %d buckets, the most it may", a.Name, maxBuckets)
		}
		c.entries = append(c.entries, e) // destroyed with c
		added = true
		sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].Name < c.entries[j].Name })
		return nil
	})
	if err != nil {
		if !added {
			e.destroy()
		}
		return Bucket{}, err
	}
	// Set or taken away: a mark left from a bucket of this name before
	// never carries over to this one.
	if err := a.setPrivateHost(n.Name, ep, n.PrivateHost); err != nil {
		return Bucket{}, fmt.Errorf("bucket %s was added, but its --private-host mark was not written (its endpoint reaches only the internet until it is): %w", n.Name, err)
	}
	b := e.Bucket
	b.PrivateHost = n.PrivateHost
	return b, nil
}

// Remove takes bucket name out of the agent's rclone.conf; what was
// pushed there stays in the bucket.
func (a *Agent) Remove(name string) error {
	err := a.change(func(c *conf) error {
		i, e := c.find(name)
		if e == nil {
			return fmt.Errorf("%w: agent %s has no bucket %s", ErrNoBucket, a.Name, name)
		}
		c.entries = append(c.entries[:i], c.entries[i+1:]...)
		e.destroy()
		return nil
	})
	if err != nil {
		return err
	}
	return a.setPrivateHost(name, "", false)
}

// obscure is password (or, when nil, 32 random bytes as base64url)
// obscured as rclone keeps it, by rclone obscure reading it on stdin.
func (a *Agent) obscure(ctx context.Context, password *secret.Value) (*secret.Value, error) {
	var plain []byte
	if password != nil {
		if bytes.ContainsAny(password.Bytes(), "\r\n") || password.Len() == 0 {
			return nil, errors.New("an encryption password is one line")
		}
		plain = bytes.Clone(password.Bytes())
	} else {
		var raw [32]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return nil, err
		}
		plain = []byte(base64.RawURLEncoding.EncodeToString(raw[:]))
		clear(raw[:])
	}
	defer clear(plain)
	r, h, err := a.runner(nil, nil)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	r.hide = append(r.hide, plain)
	out, err := r.run(ctx, bytes.NewReader(append(plain, '\n')), reach{}, "obscure", "-")
	defer clear(out)
	if err != nil {
		return nil, err
	}
	ob := bytes.TrimSpace(out)
	if !isObscured(ob) {
		return nil, errors.New("rclone obscure gave back no obscured password")
	}
	return secret.New(bytes.Clone(ob))
}

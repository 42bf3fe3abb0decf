package cli

import (
	"bytes"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/secret"
)

// bucketKeys is a bucket's access key pair and, when asked, its
// encryption password.
type bucketKeys struct {
	id       string
	secret   *secret.Value
	password *secret.Value
}

func (k *bucketKeys) destroy() {
	k.secret.Destroy()
	if k.password != nil {
		k.password.Destroy()
	}
}

// readBucketKeys reads the access key id, the secret access key and,
// with password, the encryption password: from a terminal each asked
// with echo off; from anything else one a line. A value never passes
// through a flag or a string but the key id's.
func readBucketKeys(f *os.File, promptTo io.Writer, password bool) (*bucketKeys, error) {
	want := 2
	if password {
		want = 3
	}
	if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
		prompts := []string{"access key id: ", "secret access key (not shown): ", "encryption password (not shown): "}
		var vals []*secret.Value
		for _, p := range prompts[:want] {
			v, err := secret.Read(f, promptTo, p)
			if err != nil {
				for _, v := range vals {
					v.Destroy()
				}
				return nil, err
			}
			vals = append(vals, v)
		}
		return keysOf(vals)
	}
	all, err := secret.Read(f, promptTo, "")
	if err != nil {
		return nil, err
	}
	defer all.Destroy()
	lines := bytes.Split(all.Bytes(), []byte("\n"))
	if len(lines) != want {
		if password {
			return nil, errors.New("stdin holds the access key id, the secret access key and the encryption password, one a line")
		}
		return nil, errors.New("stdin holds the access key id and the secret access key, one a line")
	}
	var vals []*secret.Value
	for _, l := range lines {
		v, err := secret.New(bytes.Clone(bytes.TrimSuffix(l, []byte("\r"))))
		if err != nil || v.Len() == 0 {
			for _, v := range vals {
				v.Destroy()
			}
			return nil, errors.New("an empty line where a key or the password was expected")
		}
		vals = append(vals, v)
	}
	return keysOf(vals)
}

// keysOf makes bucketKeys of the values read, the first (the key id,
// not a secret) kept as a string.
func keysOf(vals []*secret.Value) (*bucketKeys, error) {
	k := &bucketKeys{id: string(vals[0].Bytes()), secret: vals[1]}
	vals[0].Destroy()
	if len(vals) == 3 {
		k.password = vals[2]
	}
	return k, nil
}

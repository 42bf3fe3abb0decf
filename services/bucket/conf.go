package bucket

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"lnk.dev/lnk/internal/secret"
)

// ConfName is the agent's rclone.conf, in its Config folder.
const ConfName = "rclone.conf"

// maxConf is the most rclone.conf Link reads; maxBuckets the most
// buckets an agent has.
const (
	maxConf    = 64 << 10
	maxBuckets = 32
)

// ErrConf is wrapped by every refusal of rclone.conf's text.
var ErrConf = errors.New("rclone.conf is not as Link writes it")

// Bucket is what Link shows of a bucket: never a key or the password.
type Bucket struct {
	Name      string `json:"name"`
	Endpoint  string `json:"endpoint"`
	S3Bucket  string `json:"bucket"`
	Region    string `json:"region,omitempty"`
	Folder    string `json:"folder"` // the agent's ID: its folder in the S3 bucket
	Encrypted bool   `json:"encrypted"`
	// PrivateHost: the owner marked it --private-host (private.go), so
	// its endpoint may be on the owner's own network. Never in
	// rclone.conf: a move never carries it.
	PrivateHost bool `json:"private_host"`
}

// entry is a bucket with its secrets: the access key pair and, when
// encrypted, the crypt password as rclone keeps it (obscured).
type entry struct {
	Bucket
	keyID     string
	secretKey *secret.Value
	obscured  *secret.Value
}

func (e *entry) destroy() {
	e.secretKey.Destroy()
	if e.obscured != nil {
		e.obscured.Destroy()
	}
}

// conf is rclone.conf: the agent's buckets, in name order.
type conf struct{ entries []*entry }

func (c *conf) destroy() {
	for _, e := range c.entries {
		e.destroy()
	}
}

func (c *conf) find(name string) (int, *entry) {
	for i, e := range c.entries {
		if e.Name == name {
			return i, e
		}
	}
	return -1, nil
}

// s3Section is the name of the section holding bucket name's endpoint
// and keys ('_' is in no bucket's name, so it is no other bucket's).
func s3Section(name string) string { return name + "_s3" }

// encode writes c as rclone reads it. The caller clears the bytes.
func (c *conf) encode() []byte {
	var b bytes.Buffer
	b.WriteString("# An agent's buckets, written by Link (lnk agent bucket add|remove): a file of\n# another form is refused. The keys and the obscured password are secrets.\n")
	for _, e := range c.entries {
		fmt.Fprintf(&b, "\n[%s]\ntype = s3\nprovider = Other\nenv_auth = false\nforce_path_style = true\nno_check_bucket = true\n", s3Section(e.Name))
		fmt.Fprintf(&b, "endpoint = %s\n", e.Endpoint)
		if e.Region != "" {
			fmt.Fprintf(&b, "region = %s\n", e.Region)
		}
		fmt.Fprintf(&b, "access_key_id = %s\nsecret_access_key = ", e.keyID)
		b.Write(e.secretKey.Bytes())
		remote := s3Section(e.Name) + ":" + e.S3Bucket + "/" + e.Folder
		if !e.Encrypted {
			fmt.Fprintf(&b, "\n\n[%s]\ntype = alias\nremote = %s\n", e.Name, remote)
			continue
		}
		fmt.Fprintf(&b, "\n\n[%s]\ntype = crypt\nremote = %s\nfilename_encryption = standard\ndirectory_name_encryption = true\npassword = ", e.Name, remote)
		b.Write(e.obscured.Bytes())
		b.WriteString("\n")
	}
	return b.Bytes()
}

// parseConf reads rclone.conf in the one form encode writes: comments,
// blank lines, [section] and "key = value" lines; every section one of a
// bucket's pair, every key one Link writes, each once, each value checked
// as Add checks it. Anything else refuses the whole file.
func parseConf(data []byte) (*conf, error) {
	if len(data) > maxConf {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrConf, maxConf)
	}
	sections := map[string]map[string][]byte{}
	var order []string
	var cur map[string][]byte
	defer func() {
		for _, s := range sections {
			for _, v := range s {
				clear(v)
			}
		}
	}()
	for n, line := range bytes.Split(data, []byte("\n")) {
		bad := func(why string) error { return fmt.Errorf("%w: line %d: %s", ErrConf, n+1, why) }
		switch {
		case len(line) == 0 || line[0] == '#':
		case line[0] == '[':
			name, ok := bytes.CutSuffix(line[1:], []byte("]"))
			if !ok || len(name) == 0 {
				return nil, bad("a section is [name]")
			}
			if _, dup := sections[string(name)]; dup {
				return nil, bad("section [" + string(name) + "] twice")
			}
			if len(sections) >= 2*maxBuckets {
				return nil, bad(fmt.Sprintf("more than %d buckets", maxBuckets))
			}
			cur = map[string][]byte{}
			sections[string(name)] = cur
			order = append(order, string(name))
		default:
			k, v, ok := bytes.Cut(line, []byte(" = "))
			if !ok || cur == nil {
				return nil, bad("not \"key = value\" in a section")
			}
			if _, dup := cur[string(k)]; dup {
				return nil, bad("key " + string(k) + " twice")
			}
			cur[string(k)] = bytes.Clone(v)
		}
	}
	c := &conf{}
	for _, name := range order {
		if strings.HasSuffix(name, "_s3") {
			if _, ok := sections[strings.TrimSuffix(name, "_s3")]; !ok {
				c.destroy()
				return nil, fmt.Errorf("%w: [%s] with no bucket of its own", ErrConf, name)
			}
			continue
		}
		e, err := parseEntry(name, sections[name], sections[s3Section(name)])
		if err != nil {
			c.destroy()
			return nil, err
		}
		c.entries = append(c.entries, e)
	}
	sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].Name < c.entries[j].Name })
	return c, nil
}

// parseEntry reads bucket name from its two sections.
func parseEntry(name string, top, s3 map[string][]byte) (*entry, error) {
	bad := func(why string) (*entry, error) { return nil, fmt.Errorf("%w: bucket [%s]: %s", ErrConf, name, why) }
	if err := CheckName(name); err != nil {
		return bad(err.Error())
	}
	if s3 == nil {
		return bad("no [" + s3Section(name) + "]")
	}
	fixed := map[string]string{"type": "s3", "provider": "Other", "env_auth": "false", "force_path_style": "true", "no_check_bucket": "true"}
	want := map[string]bool{"endpoint": true, "region": false, "access_key_id": true, "secret_access_key": true}
	if err := keysOf(s3, fixed, want); err != nil {
		return bad(err.Error())
	}
	e := &entry{Bucket: Bucket{Name: name, Region: string(s3["region"])}, keyID: string(s3["access_key_id"])}
	ep, err := CheckEndpoint(string(s3["endpoint"]))
	if err != nil || ep != string(s3["endpoint"]) {
		return bad("endpoint is not one Link would write")
	}
	e.Endpoint = ep
	if err := CheckRegion(e.Region); err != nil || (e.Region == "" && s3["region"] != nil) {
		return bad("region is not one Link would write")
	}
	if err := checkKeys(e.keyID, s3["secret_access_key"]); err != nil {
		return bad(err.Error())
	}
	switch string(top["type"]) {
	case "alias":
		err = keysOf(top, map[string]string{"type": "alias"}, map[string]bool{"remote": true})
	case "crypt":
		err = keysOf(top, map[string]string{"type": "crypt", "filename_encryption": "standard", "directory_name_encryption": "true"}, map[string]bool{"remote": true, "password": true})
		e.Encrypted = true
	default:
		return bad("type is neither alias nor crypt")
	}
	if err != nil {
		return bad(err.Error())
	}
	b, folder, ok := strings.Cut(strings.TrimPrefix(string(top["remote"]), s3Section(name)+":"), "/")
	if !ok || !strings.HasPrefix(string(top["remote"]), s3Section(name)+":") || CheckS3Bucket(b) != nil || !isFolderID(folder) {
		return bad("remote is not " + s3Section(name) + ":<bucket>/<agent id>")
	}
	e.S3Bucket, e.Folder = b, folder
	if e.Encrypted {
		if !isObscured(top["password"]) {
			return bad("password is not obscured as rclone keeps it")
		}
		if e.obscured, err = secret.New(bytes.Clone(top["password"])); err != nil {
			return nil, err
		}
	}
	if e.secretKey, err = secret.New(bytes.Clone(s3["secret_access_key"])); err != nil {
		e.destroy()
		return nil, err
	}
	return e, nil
}

// keysOf refuses a section holding a key neither fixed (with its one
// value) nor in want, or missing a fixed key or a wanted (true) one.
func keysOf(s map[string][]byte, fixed map[string]string, want map[string]bool) error {
	for k, v := range s {
		if f, ok := fixed[k]; ok {
			if string(v) != f {
				return fmt.Errorf("%s is not %s", k, f)
			}
			continue
		}
		if _, ok := want[k]; !ok {
			return fmt.Errorf("key %q is not one Link writes", k)
		}
	}
	for k := range fixed {
		if _, ok := s[k]; !ok {
			return fmt.Errorf("no %s", k)
		}
	}
	for k, must := range want {
		if _, ok := s[k]; must && !ok {
			return fmt.Errorf("no %s", k)
		}
	}
	return nil
}

// isFolderID reports whether s is an agent ID: 32 lowercase hex digits.
func isFolderID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// isObscured reports whether b reads as rclone's obscured form: unpadded
// base64url, long enough for its 16-byte IV and a password.
func isObscured(b []byte) bool {
	if len(b) < 24 || len(b) > 512 {
		return false
	}
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

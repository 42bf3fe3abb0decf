package bucket

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseConf: parseConf never panics, and what it takes it writes
// again as it read it (encode(parse(x)) parses to the same buckets and
// encodes to the same bytes), so no form but Link's own gets through.
// NarrowReceived of what it takes leaves out only whole buckets, and
// keeps none whose endpoint is this machine or its network.
// Seeds in testdata/fuzz/FuzzParseConf are replayed by go test.
func FuzzParseConf(f *testing.F) {
	f.Add([]byte(validConf))
	f.Add([]byte(strings.Replace(validConf, "https://s3.invalid", "http://127.0.0.1:9000", 1)))
	f.Add([]byte(strings.Replace(validConf, "https://s3.invalid", "https://minio:9000", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseConf(data)
		if err != nil {
			return
		}
		defer c.destroy()
		kept, dropped, err := NarrowReceived(data)
		if err != nil {
			t.Fatalf("a conf parsed is refused by NarrowReceived: %v", err)
		}
		if kept != nil {
			k, err := parseConf(kept)
			if err != nil {
				t.Fatalf("the narrowed conf is refused: %v\n%s", err, kept)
			}
			for _, e := range k.entries {
				if localEndpoint(e.Endpoint) != "" {
					t.Fatalf("bucket %s kept, its endpoint %s local", e.Name, e.Endpoint)
				}
			}
			if len(k.entries)+len(dropped) != len(c.entries) {
				t.Fatalf("%d kept and %d left out of %d", len(k.entries), len(dropped), len(c.entries))
			}
			k.destroy()
		} else if len(dropped) != len(c.entries) {
			t.Fatalf("nothing kept, but %d left out of %d", len(dropped), len(c.entries))
		}
		out := c.encode()
		c2, err := parseConf(out)
		if err != nil {
			t.Fatalf("Link's own encoding is refused: %v\n%s", err, out)
		}
		defer c2.destroy()
		if !bytes.Equal(c2.encode(), out) || len(c2.entries) != len(c.entries) {
			t.Fatal("a second encoding differs")
		}
	})
}

const validConf = `# An agent's buckets
[a_s3]
type = s3
provider = Other
env_auth = false
force_path_style = true
no_check_bucket = true
endpoint = https://s3.invalid
region = eu-west-1
access_key_id = AKIDEXAMPLE
secret_access_key = c2VjcmV0/key+x

[a]
type = crypt
remote = a_s3:my-bucket/0123456789abcdef0123456789abcdef
filename_encryption = standard
directory_name_encryption = true
password = YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo
`

// TestParseConfRefusesOtherForms: a key Link doesn't write, a remote
// outside the agent's folder, an http endpoint off loopback, a section
// twice: each refuses the whole file; the valid file (the control) reads.
func TestParseConfRefusesOtherForms(t *testing.T) {
	c, err := parseConf([]byte(validConf))
	if err != nil || len(c.entries) != 1 || !c.entries[0].Encrypted || c.entries[0].S3Bucket != "my-bucket" {
		t.Fatalf("the control: %v %+v", err, c)
	}
	for name, bad := range map[string]string{
		"unknown key":    "type = s3\n", // replaced below
		"remote escapes": "remote = a_s3:my-bucket/../other",
		"http off-host":  "endpoint = http://s3.invalid",
		"copy links":     "copy_links = true",
		"twice":          "[a]",
	} {
		var text string
		switch name {
		case "unknown key":
			text = bytes.NewBufferString(validConf).String() + "server_side_encryption = aws:kms\n"
		case "remote escapes":
			text = string(bytes.Replace([]byte(validConf), []byte("remote = a_s3:my-bucket/0123456789abcdef0123456789abcdef"), []byte(bad), 1))
		case "http off-host":
			text = string(bytes.Replace([]byte(validConf), []byte("endpoint = https://s3.invalid"), []byte(bad), 1))
		case "copy links":
			text = string(bytes.Replace([]byte(validConf), []byte("env_auth = false\n"), []byte("env_auth = false\n"+bad+"\n"), 1))
		case "twice":
			text = validConf + "\n" + bad + "\ntype = alias\n"
		}
		if _, err := parseConf([]byte(text)); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
}

package move_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/moveentry/movetest"
	"lnk.dev/lnk/services/bucket"
	"lnk.dev/lnk/services/move"
)

// TestLocalBucketsLeftOut receives an agent new here whose rclone.conf,
// sealed apart to the receiver's key and in Link's form, aims a bucket at
// what is, on the receiving machine, itself or its network (loopback,
// private, link-local, metadata addresses, localhost, a name of one
// label): the agent is placed, the bucket is not (no rclone.conf, or one
// holding only the buckets kept), and the owner is told which bucket was
// left out, why, and the lnk agent bucket add that gives it again. The
// positive control: the same stream with an https public-name endpoint
// keeps its conf byte for byte, and a conf with both keeps the public one.
func TestLocalBucketsLeftOut(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	pub, priv := newKey(t)
	good := confFor(id)
	withEndpoint := func(ep string) string {
		return strings.Replace(good, "endpoint = https://s3.example.com\n", "endpoint = "+ep+"\n", 1)
	}
	receive := func(t *testing.T, conf string) (string, *move.Received) {
		t.Helper()
		_, to := twoHomes(t)
		r := &move.Receive{Home: to, Key: priv}
		got, err := r.Run(context.Background(), bytes.NewReader(seal(t, pub, movetest.WithBuckets(id, "main", seal(t, pub, []byte(conf))).B.Bytes())))
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if _, err := caps.LoadAgent(to, "main"); err != nil {
			t.Fatalf("the agent was not placed: %v", err)
		}
		return to, got
	}
	confHere := func(to string) (string, error) {
		b, err := os.ReadFile(filepath.Join(caps.Layout{Home: to}.ConfigDir("main"), bucket.ConfName))
		return string(b), err
	}
	for _, ep := range []string{
		"http://127.0.0.1:9000",
		"https://127.0.0.2",
		"https://[::1]:9000",
		"https://10.1.2.3:9000",
		"https://192.168.1.20",
		"https://[fd00::1]",
		"https://169.254.169.254",
		"https://100.64.0.1",
		"https://localhost:9000",
		"https://s3.localhost",
		"https://minio:9000",
	} {
		t.Run(ep, func(t *testing.T) {
			to, got := receive(t, withEndpoint(ep))
			if b, err := confHere(to); !os.IsNotExist(err) {
				t.Errorf("rclone.conf placed: %q, %v", b, err)
			}
			if strings.Contains(strings.Join(got.Placed, ","), "buckets") {
				t.Errorf("placed %v: the buckets named", got.Placed)
			}
			if len(got.Buckets) != 1 || !strings.HasPrefix(got.Buckets[0], "bucket backup: its endpoint is ") ||
				!strings.Contains(got.Buckets[0], "lnk agent bucket add main backup --s3 '"+ep+"' --bucket 'link-bucket' --encrypt --ask-password") {
				t.Errorf("the owner is told %q", got.Buckets)
			}
		})
	}
	t.Run("positive-control", func(t *testing.T) {
		to, got := receive(t, good)
		if b, err := confHere(to); err != nil || b != good {
			t.Errorf("rclone.conf here: %q, %v", b, err)
		}
		if len(got.Buckets) != 0 || !strings.Contains(strings.Join(got.Placed, ","), "buckets") {
			t.Errorf("left out %q, placed %v", got.Buckets, got.Placed)
		}
	})
	t.Run("public-kept-local-left", func(t *testing.T) {
		local := strings.ReplaceAll(strings.SplitN(withEndpoint("http://127.0.0.1:9000"), "\n\n", 2)[1], "backup", "nearby")
		to, got := receive(t, good+"\n"+local)
		if b, err := confHere(to); err != nil || b != good {
			t.Errorf("rclone.conf here: %q, %v; want the public bucket alone", b, err)
		}
		if len(got.Buckets) != 1 || !strings.HasPrefix(got.Buckets[0], "bucket nearby: its endpoint is a loopback address") {
			t.Errorf("the owner is told %q", got.Buckets)
		}
	})
}

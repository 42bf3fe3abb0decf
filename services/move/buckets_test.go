package move_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/moveentry/movetest"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/services/bucket"
	"lnk.dev/lnk/services/move"
)

// The secrets of the conf the tests write: none may be seen in a stream
// but sealed apart.
const (
	testKeyID    = "AKIAMOVETESTKEYID01"
	testSecret   = "movetest-secret-access-key-0123456789"
	testObscured = "Zm9vYmFyYmF6cXV1eG1vdmV0ZXN0b2JzY3VyZWRwYXNzd29yZA"
)

// confFor is an rclone.conf in the form Link writes it, with an
// encrypted bucket in agent id's folder.
func confFor(id string) string {
	return "# An agent's buckets, written by Link (lnk agent bucket add|remove): a file of\n# another form is refused. The keys and the obscured password are secrets.\n" +
		"\n[backup_s3]\ntype = s3\nprovider = Other\nenv_auth = false\nforce_path_style = true\nno_check_bucket = true\n" +
		"endpoint = https://s3.example.com\naccess_key_id = " + testKeyID + "\nsecret_access_key = " + testSecret + "\n" +
		"\n[backup]\ntype = crypt\nremote = backup_s3:link-bucket/" + id + "\nfilename_encryption = standard\ndirectory_name_encryption = true\npassword = " + testObscured + "\n"
}

// putConf writes agent name's rclone.conf as Link would, and reads it
// back through services/bucket, so the test's conf is Link's form.
func putConf(t *testing.T, home, name, text string) {
	t.Helper()
	write(t, filepath.Join(caps.Layout{Home: home}.ConfigDir(name), bucket.ConfName), text, 0o600)
	b, err := bucket.LoadAgent(home, name)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.List(); err != nil || len(got) != 1 || !got[0].Encrypted {
		t.Fatalf("the test's rclone.conf reads back as %+v, %v", got, err)
	}
}

// TestMoveCarriesBuckets sends an agent with an encrypted bucket: its
// rclone.conf arrives byte for byte, 600; neither the sealed stream nor
// its opened plaintext holds the key ID, the secret key or the obscured
// password (they travel sealed apart); and the leaving side's conf is
// gone with its keys.
func TestMoveCarriesBuckets(t *testing.T) {
	from, to := twoHomes(t)
	a := makeAgent(t, from, "main")
	conf := confFor(a.ID)
	putConf(t, from, "main", conf)
	pub, priv := newKey(t)
	sealed := send(t, from, "main", pub)
	sr, err := stream.NewReader(bytes.NewReader(sealed), priv)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(sr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{testKeyID, testSecret, testObscured, "secret_access_key", "[backup_s3]"} {
		if bytes.Contains(sealed, []byte(s)) || bytes.Contains(plain, []byte(s)) {
			t.Errorf("%q is in the stream outside its sealed blob", s)
		}
	}
	got, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(sealed))
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if !strings.Contains(strings.Join(got.Placed, ","), "buckets") {
		t.Errorf("placed %v, want the buckets named", got.Placed)
	}
	p := filepath.Join(caps.Layout{Home: to}.ConfigDir("main"), bucket.ConfName)
	b, err := os.ReadFile(p)
	if err != nil || string(b) != conf {
		t.Errorf("rclone.conf here: %q, %v; want it as it left", b, err)
	}
	if fi, err := os.Lstat(p); err != nil {
		t.Errorf("rclone.conf here: %v", err)
	} else if fi.Mode() != 0o600 {
		t.Errorf("rclone.conf here: %v; want a file, 600", fi.Mode())
	}
	hist, err := move.Leave(from, "main", "elsewhere", func() error { return nil })
	if err != nil {
		t.Fatalf("leave: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(caps.Layout{Home: from}.ConfigDir("main"), bucket.ConfName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the leaving side's rclone.conf: %v, want it gone", err)
	}
	leftover := snapshot(t, hist)
	if strings.Contains(leftover, bucket.ConfName) {
		t.Errorf("History keeps an rclone.conf:\n%s", leftover)
	}
}

// TestBucketsKeptOnReturn: an agent coming back keeps the rclone.conf it
// has here, as it keeps its settings; the stream's is named, not used.
func TestBucketsKeptOnReturn(t *testing.T) {
	from, to := twoHomes(t)
	a := makeAgent(t, from, "main")
	putConf(t, from, "main", confFor(a.ID))
	if _, _, err := caps.AdoptAgent(to, &caps.Agent{ID: a.ID, Name: "main"}, nil); err != nil {
		t.Fatal(err)
	}
	here := strings.Replace(confFor(a.ID), testKeyID, "AKIAKEPTHERE0000001", 1)
	putConf(t, to, "main", here)
	pub, priv := newKey(t)
	var notes []string
	r := &move.Receive{Home: to, Key: priv, Note: func(n string) { notes = append(notes, n) }}
	if _, err := r.Run(context.Background(), bytes.NewReader(send(t, from, "main", pub))); err != nil {
		t.Fatalf("receive: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(caps.Layout{Home: to}.ConfigDir("main"), bucket.ConfName)); string(b) != here {
		t.Errorf("rclone.conf here was replaced:\n%s", b)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "keeps the buckets") {
		t.Errorf("notes %q: want the kept buckets named", notes)
	}
}

// TestHostileBucketsPlaceNothing receives streams whose rclone.conf,
// sealed apart to the receiver's own key, is not Link's form, points at
// another agent's folder, is sealed to another key, or is not sealed:
// each is refused, and the agent new here is not made (no folder of it,
// no settings, no staging folder, no secrets file left). The positive control, the same stream with Link's conf, is
// taken.
func TestHostileBucketsPlaceNothing(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	pub, priv := newKey(t)
	otherPub, _ := newKey(t)
	good := confFor(id)
	cases := map[string][]byte{
		"extra-key":      seal(t, pub, []byte(strings.Replace(good, "env_auth = false\n", "env_auth = false\nupload_cutoff = 1\n", 1))),
		"command":        seal(t, pub, []byte(good+"\n[x]\ntype = alias\nremote = :local,command=touch /tmp/x:\n")),
		"plain-password": seal(t, pub, []byte(strings.Replace(good, testObscured, "hunter2", 1))),
		"other-folder":   seal(t, pub, []byte(strings.ReplaceAll(good, id, "ffffffffffffffffffffffffffffffff"))),
		"sealed-empty":   seal(t, pub, nil),
		"wrong-key":      seal(t, otherPub, []byte(good)),
		"not-sealed":     []byte(good),
	}
	for name, blob := range cases {
		t.Run(name, func(t *testing.T) {
			_, to := twoHomes(t)
			l := caps.Layout{Home: to}
			r := &move.Receive{Home: to, Key: priv}
			if _, err := r.Run(context.Background(), bytes.NewReader(seal(t, pub, movetest.WithBuckets(id, "main", blob).B.Bytes()))); err == nil {
				t.Fatal("the stream was taken")
			} else {
				t.Logf("refused: %v", err)
			}
			for _, p := range []string{l.AgentDir("main"), filepath.Join(l.Settings(), "agents", "main"), filepath.Join(l.Agents(), ".moving", id), filepath.Join(to, ".lnk", "secrets.toml")} {
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s is left: %v", p, err)
				}
			}
		})
	}
	// The agent already here: refused as whole, it is byte for byte as
	// it was.
	for name, blob := range cases {
		t.Run("here-"+name, func(t *testing.T) {
			to := receiverWith(t, id)
			l := caps.Layout{Home: to}
			// No .moving before, none after: a receive removes the one it
			// made and left empty.
			before := snapshot(t, l.Link()) + snapshot(t, filepath.Join(to, ".lnk", "agents"))
			r := &move.Receive{Home: to, Key: priv}
			if _, err := r.Run(context.Background(), bytes.NewReader(seal(t, pub, movetest.WithBuckets(id, "main", blob).B.Bytes()))); err == nil {
				t.Fatal("the stream was taken")
			}
			if after := snapshot(t, l.Link()) + snapshot(t, filepath.Join(to, ".lnk", "agents")); after != before {
				t.Errorf("the agent here changed:\n%s\n---\n%s", before, after)
			}
		})
	}
	t.Run("positive-control", func(t *testing.T) {
		_, to := twoHomes(t)
		r := &move.Receive{Home: to, Key: priv}
		if _, err := r.Run(context.Background(), bytes.NewReader(seal(t, pub, movetest.WithBuckets(id, "main", seal(t, pub, []byte(good))).B.Bytes()))); err != nil {
			t.Fatalf("the good stream: %v", err)
		}
		if b, err := os.ReadFile(filepath.Join(caps.Layout{Home: to}.ConfigDir("main"), bucket.ConfName)); err != nil || string(b) != good {
			t.Errorf("rclone.conf here: %q, %v", b, err)
		}
	})
}

// TestSendRefusesAConfNotLinks: an rclone.conf not in the form Link
// writes stops the send, saying why, with the lnk command that gives the
// agent its buckets again; nothing is written. (The positive control is
// TestMoveCarriesBuckets.)
func TestSendRefusesAConfNotLinks(t *testing.T) {
	from, _ := twoHomes(t)
	a := makeAgent(t, from, "main")
	write(t, filepath.Join(caps.Layout{Home: from}.ConfigDir("main"), bucket.ConfName),
		strings.Replace(confFor(a.ID), "type = crypt\n", "type = crypt\ncopy_links = true\n", 1), 0o600)
	pub, _ := newKey(t)
	var out bytes.Buffer
	err := (&move.Send{Home: from, Name: "main", To: pub}).Run(context.Background(), &out)
	r, ok := refusal.Of(err)
	if !ok || !errors.Is(err, bucket.ErrConf) || !strings.Contains(r.Hint, "lnk agent bucket add main") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("send: %v (refusal %+v), want a one-line refusal of the conf with a hint", err, r)
	}
	if bytes.Contains(out.Bytes(), []byte(testObscured)) || bytes.Contains(out.Bytes(), []byte(testSecret)) {
		t.Error("the refused conf's secrets were written")
	}
}

package move_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/services/move"
)

// TestRoundTripBetweenTwoHomes sends an agent from one HOME and receives
// it in another: its files (a file over 8 MB copied aside among them),
// its link as a link, its conversation and memory arrive identical, its
// secret arrives granted to it, and its grants are narrowed: the port the
// stream gave is left out of the file written and the compiled grants,
// named as the flag that would give it, while a grant the stream may
// give (an internet host) is kept.
func TestRoundTripBetweenTwoHomes(t *testing.T) {
	from, to := twoHomes(t)
	a := makeAgent(t, from, "main")
	big := make([]byte, move.AsideOver+12345)
	rand.Read(big)
	bigPath := filepath.Join(caps.Layout{Home: from}.FilesDir("main"), "big.bin")
	if err := os.WriteFile(bigPath, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := caps.Allow(from, "main", caps.Grants{Ports: []string{"8080"}, InternetHosts: []string{"example.com"}}); err != nil {
		t.Fatal(err)
	}
	v, _ := secret.FromString("model-key-value")
	if err := secrets.Update(from, func(f *secrets.File) error {
		f.Secrets["AGENT_MAIN_MODEL_KEY"] = &secrets.Entry{Value: v, Agents: []string{a.ID}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	pub, priv := newKey(t)
	sealed := send(t, from, "main", pub)

	var notes []string
	r := &move.Receive{Home: to, Key: priv, Note: func(n string) { notes = append(notes, n) }}
	got, err := r.Run(context.Background(), bytes.NewReader(sealed))
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if !got.New || got.ID != a.ID {
		t.Errorf("received %+v, want agent %s new here", got, a.ID)
	}
	lf, lt := caps.Layout{Home: from}, caps.Layout{Home: to}
	for _, d := range [][2]string{{lf.FilesDir("main"), lt.FilesDir("main")}, {filepath.Join(lf.OwnDir("main"), "chats"), filepath.Join(lt.OwnDir("main"), "chats")},
		{filepath.Join(lf.OwnDir("main"), "memory"), filepath.Join(lt.OwnDir("main"), "memory")}} {
		if a, b := snapshot(t, d[0]), snapshot(t, d[1]); a != b {
			t.Errorf("%s differs from where it came from:\n%s\n---\n%s", d[1], a, b)
		}
	}
	if tgt, err := os.Readlink(filepath.Join(lt.FilesDir("main"), "work", "up")); err != nil || tgt != "../../../../../etc/passwd" {
		t.Errorf("the link arrived as %q, %v: want it carried as it is", tgt, err)
	}
	arrived, err := caps.LoadAgent(to, "main")
	if err != nil || arrived.ID != a.ID {
		t.Fatalf("the agent here: %+v, %v", arrived, err)
	}
	// The grants, read back from the file and compiled.
	spec, _ := os.ReadFile(lt.SandboxFile("main"))
	if strings.Contains(string(spec), "8080") || !strings.Contains(string(spec), "example.com") {
		t.Errorf("sandbox.toml here:\n%s\nwant example.com kept and port 8080 left out", spec)
	}
	c, err := caps.CompileAgent(to, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.LocalhostPorts) != 0 || !slices.Contains(c.Internet.Hosts, "example.com") {
		t.Errorf("compiled: ports %v hosts %v", c.LocalhostPorts, c.Internet.Hosts)
	}
	if !slices.Contains(got.Allow, "--port '8080'") {
		t.Errorf("left out %v, want --port '8080' named", got.Allow)
	}
	sf, err := secrets.Load(to)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Destroy()
	e := sf.Secrets["AGENT_MAIN_MODEL_KEY"]
	if e == nil || !e.GrantedTo(a.ID) || !e.Value.Equal([]byte("model-key-value")) {
		t.Errorf("the secret did not arrive granted to the agent: %+v", e)
	}
	if _, err := os.Lstat(filepath.Join(lt.Agents(), ".moving", a.ID)); !os.IsNotExist(err) {
		t.Errorf("the staging folder is still there: %v", err)
	}
}

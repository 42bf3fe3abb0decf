package webhook

import (
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

func testAgent(t testing.TB) Agent {
	t.Helper()
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "helper"); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAgent(home, "helper")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRollKeepsPreviousFor24Hours: after a roll, the secrets read at a
// post hold the previous one until its expiry and not after.
func TestRollKeepsPreviousFor24Hours(t *testing.T) {
	a := testAgent(t)
	now := time.Now()
	added, err := a.Add("ci", now)
	if err != nil {
		t.Fatal(err)
	}
	first := string(added.Secret.Bytes())
	added.Secret.Destroy()
	rolled, err := a.Roll("ci", now)
	if err != nil {
		t.Fatal(err)
	}
	rolled.Secret.Destroy()
	s, _ := a.Load()
	h := *s.Find("ci")
	in, err := a.Secrets(h, now.Add(23*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if in.Previous == nil || string(in.Previous.Bytes()) != first || string(in.Current.Bytes()) == first {
		t.Fatal("within 24 h the previous secret is not the first one")
	}
	in.Destroy()
	after, err := a.Secrets(h, now.Add(24*time.Hour+time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if after.Previous != nil {
		t.Fatal("the previous secret is still taken past 24 h")
	}
	after.Destroy()
}

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/webhook"
)

// TestWebhookCommands: add shows the secret once and records the hook
// (read back from webhooks.json and secrets.toml after each command);
// list never shows it; roll keeps the previous one with its expiry until
// roll --done; remove drops both; bad input is refused with a hint.
func TestWebhookCommands(t *testing.T) {
	lnkBin(t)
	home := testenv.Home(t)
	run := func(want int, args ...string) string {
		t.Helper()
		out, errs, code := lnkRun(t, nil, args...)
		if code != want {
			t.Fatalf("lnk %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	run(0, "agent", "create", "helper")
	a, err := webhook.LoadAgent(home, "helper")
	if err != nil {
		t.Fatal(err)
	}
	settings := func() webhook.Settings {
		t.Helper()
		p := filepath.Join(home, ".lnk", "agents", a.ID, webhook.SettingsName)
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("%s is %o, want 600", p, st.Mode().Perm())
		}
		b, _ := os.ReadFile(p)
		var s webhook.Settings
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	secretsFile := func() string {
		b, _ := os.ReadFile(filepath.Join(home, ".lnk", "secrets.toml"))
		return string(b)
	}

	out := run(0, "agent", "webhook", "add", "helper", "github")
	s := settings()
	if len(s.Hooks) != 1 || s.Hooks[0].Name != "github" || len(s.Hooks[0].ID) != 32 || s.Port == 0 {
		t.Fatalf("after add: %+v", s)
	}
	id := s.Hooks[0].ID
	if !strings.Contains(out, "/h/"+id) || !strings.Contains(out, "whsec_") {
		t.Fatalf("add shows no address or secret:\n%s", out)
	}
	shown := out[strings.Index(out, "whsec_"):]
	shown = strings.TrimSpace(shown)
	if !strings.Contains(secretsFile(), "[secrets."+webhook.SecretName(id)+"]") {
		t.Fatalf("secret not kept:\n%s", secretsFile())
	}
	if strings.Contains(secretsFile(), `agents = ["`) {
		t.Fatalf("a webhook's secret is granted to an agent:\n%s", secretsFile())
	}
	list := run(0, "agent", "webhook", "list", "helper", "--json")
	if strings.Contains(list, shown) || strings.Contains(list, "whsec_") || !strings.Contains(list, id) {
		t.Fatalf("list:\n%s", list)
	}

	run(3, "agent", "webhook", "add", "helper", "github")
	if e := run(2, "agent", "webhook", "add", "helper", "Bad/Name"); !strings.Contains(e, "hint: lnk agent webhook list helper") {
		t.Fatalf("no hint:\n%s", e)
	}
	run(4, "agent", "webhook", "add", "nobody", "x")
	run(4, "agent", "webhook", "roll", "helper", "nope")

	out = run(0, "agent", "webhook", "roll", "helper", "github")
	if strings.Contains(out, shown) || !strings.Contains(out, "whsec_") {
		t.Fatalf("roll:\n%s", out)
	}
	s = settings()
	if s.Hooks[0].ID != id || s.Hooks[0].PreviousUntil == nil {
		t.Fatalf("after roll: %+v", s)
	}
	if !strings.Contains(secretsFile(), "[secrets."+webhook.SecretName(id)+"_PREVIOUS]") {
		t.Fatal("roll kept no previous secret")
	}
	run(0, "agent", "webhook", "roll", "helper", "github", "--done")
	if s = settings(); s.Hooks[0].PreviousUntil != nil || strings.Contains(secretsFile(), "_PREVIOUS") {
		t.Fatalf("after roll --done: %+v", s)
	}
	run(0, "agent", "webhook", "remove", "helper", "github")
	if s = settings(); len(s.Hooks) != 0 || strings.Contains(secretsFile(), webhook.SecretName(id)) {
		t.Fatalf("after remove: %+v", s)
	}
	run(4, "agent", "webhook", "remove", "helper", "github")
}

// TestWebhookAddRefusesOwnHarness: an agent whose [start] command runs
// a harness of its own is refused a webhook (exit 3, with a hint) and
// nothing is recorded; an agent on Link Harness is given one (the
// positive control).
func TestWebhookAddRefusesOwnHarness(t *testing.T) {
	lnkBin(t)
	home := testenv.Home(t)
	for _, name := range []string{"own", "linked"} {
		if _, errs, code := lnkRun(t, nil, "agent", "create", name); code != 0 {
			t.Fatalf("agent create %s: %d %s", name, code, errs)
		}
	}
	f, err := os.OpenFile(filepath.Join(home, "Link", "Agents", "own", "Config", "agent.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n[start]\ncommand = [\"/bin/true\"]\n")
	f.Close()
	out, errs, code := lnkRun(t, nil, "agent", "webhook", "add", "own", "ci")
	if code != 3 || !strings.Contains(errs, "only Link Harness takes webhooks") || !strings.Contains(errs, "hint: ") || strings.Contains(out, "whsec_") {
		t.Fatalf("add for an agent with its own harness: exit %d\n%s%s", code, out, errs)
	}
	a, err := webhook.LoadAgent(home, "own")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := a.Load(); err != nil || len(s.Hooks) != 0 {
		t.Fatalf("a refused add recorded %+v (%v)", s, err)
	}
	if out, errs, code := lnkRun(t, nil, "agent", "webhook", "add", "linked", "ci"); code != 0 || !strings.Contains(out, "whsec_") {
		t.Fatalf("add for a Link Harness agent: exit %d\n%s%s", code, out, errs)
	}
}

package namespace

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

type nsRig struct {
	t      *testing.T
	store  tooldef.Store
	ns     *Namespace
	starts atomic.Int32
	asked  atomic.Int32
}

func newNS(t *testing.T, timeout time.Duration) *nsRig {
	r := &nsRig{t: t, store: tooldef.Store{Home: testenv.Home(t)}}
	r.provider("alpha", "1")
	r.provider("beta", "1")
	r.ns = &Namespace{
		Def: Definition{Name: "work", Timeout: timeout, Actions: []Action{
			{Name: "search", Broadcast: true, Targets: []Target{{Kind: "docs", Provider: "alpha", Tool: "search"}, {Kind: "notes", Provider: "beta", Tool: "find"}}},
			{Name: "create", Targets: []Target{{Kind: "docs", Provider: "alpha", Tool: "alpha_create"}, {Kind: "notes", Provider: "beta", Tool: "beta_create"}}},
			{Name: "env", Targets: []Target{{Kind: "docs", Provider: "alpha", Tool: "env"}}},
			{Name: "hang", Targets: []Target{{Kind: "docs", Provider: "alpha", Tool: "hang"}}},
		}},
		Providers: r.store,
		Start: func(ctx context.Context, def *tooldef.Definition) (Session, error) {
			r.starts.Add(1)
			return StartStdio(ctx, def)
		},
		Approve: func(ctx context.Context, provider, tool string, args map[string]json.RawMessage) error {
			r.asked.Add(1)
			return nil
		},
	}
	if err := r.ns.Def.Check(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.ns.Close)
	return r
}

func (r *nsRig) provider(name, version string, env ...string) {
	exe, err := os.Executable()
	if err != nil {
		r.t.Fatal(err)
	}
	d := &tooldef.Definition{Name: name, Command: []string{exe}, Env: map[string]*secret.Value{}}
	for _, kv := range append([]string{"LNK_TEST_NS_PROVIDER=" + name, "LNK_TEST_NS_VERSION=" + version, "PATH=/usr/bin:/bin", "SSH_AUTH_SOCK=/tmp/agent", "LNK_TEST_NS_MARK=" + r.store.Home}, env...) {
		k, v, _ := strings.Cut(kv, "=")
		d.Env[k], _ = secret.FromString(v)
	}
	if err := r.store.Save(d); err != nil {
		r.t.Fatal(err)
	}
}

func (r *nsRig) call(action, args string) (string, error) {
	res, err := r.ns.Call(context.Background(), action, []byte(args))
	return string(res), err
}

func TestNamespaceOffersMergedSchemasAndRoutesByKind(t *testing.T) {
	r := newNS(t, 0)
	tools, err := r.ns.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range tools {
		if o.Name == "search" {
			if _, ok := o.InputSchema.Properties["tag"]; !ok || strings.Join(o.InputSchema.Required, ",") != "query" {
				t.Errorf("search offered as %+v", o.InputSchema)
			}
		}
		if o.Name == "create" && strings.Join(o.InputSchema.Required, ",") != "kind,title" {
			t.Errorf("create requires %v", o.InputSchema.Required)
		}
	}
	out, err := r.call("search", `{"query":"q"}`)
	if err != nil || !strings.Contains(out, `"docs":`) || !strings.Contains(out, "alpha1 found q") || !strings.Contains(out, `"notes":`) || !strings.Contains(out, "beta1 found q tagged") {
		t.Errorf("a broadcast read: %s %v", out, err)
	}
	if out, err := r.call("create", `{"kind":"notes","title":"t"}`); err != nil || !strings.Contains(out, "beta1 created t") || strings.Contains(out, "alpha") {
		t.Errorf("a mutation by kind: %s %v", out, err)
	}
	asked := r.asked.Load()
	for args, want := range map[string]error{
		`{"title":"t"}`:                          ErrKindRequired,
		`{"kind":"wiki","title":"t"}`:            ErrKind,
		`{"kind":"docs","title":"t","repo":"x"}`: ErrUnlisted,
		`{"kind":"docs"}`:                        ErrMissing,
	} {
		if _, err := r.call("create", args); !errors.Is(err, want) {
			t.Errorf("create %s: %v, want %v", args, err, want)
		}
	}
	// Checked against the chosen target's own schema: tag is beta's alone.
	if _, err := r.call("search", `{"kind":"docs","query":"q","tag":"x"}`); !errors.Is(err, ErrUnlisted) {
		t.Errorf("beta's field sent to alpha: %v", err)
	}
	if r.asked.Load() != asked {
		t.Error("a refused call reached approval")
	}
}

func TestProviderChangedOrRemovedBetweenCalls(t *testing.T) {
	r := newNS(t, 0)
	if out, err := r.call("create", `{"kind":"docs","title":"a"}`); err != nil || !strings.Contains(out, "alpha1 created") {
		t.Fatalf("%s %v", out, err)
	}
	starts := r.starts.Load()
	r.call("create", `{"kind":"docs","title":"b"}`)
	if r.starts.Load() != starts {
		t.Error("an unchanged provider was started again")
	}
	r.provider("alpha", "2")
	if out, err := r.call("create", `{"kind":"docs","title":"c"}`); err != nil || !strings.Contains(out, "alpha2 created c") {
		t.Errorf("after a changed launch: %s %v", out, err)
	}
	if r.starts.Load() != starts+1 {
		t.Error("a changed launch did not get a fresh session")
	}
	if err := r.store.Remove("alpha"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call("create", `{"kind":"docs","title":"d"}`); !errors.Is(err, ErrRemoved) {
		t.Errorf("a removed provider: %v", err)
	}
	if out, err := r.call("create", `{"kind":"notes","title":"e"}`); err != nil || !strings.Contains(out, "beta1 created e") {
		t.Errorf("the other provider: %s %v", out, err)
	}
	r.ns.Close()
	if _, err := r.call("create", `{"kind":"notes","title":"f"}`); !errors.Is(err, ErrClosed) {
		t.Errorf("after close: %v", err)
	}
}

func TestTimeoutAndFilteredEnvironment(t *testing.T) {
	r := newNS(t, 0)
	out, err := r.call("env", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "SSH_AUTH_SOCK") || !strings.Contains(out, "LNK_TEST_NS_VERSION") {
		t.Errorf("the provider's environment: %s", out)
	}
	// hang never answers: only the host's timeout ends it.
	r.ns.Def.Timeout = 300 * time.Millisecond
	if _, err := r.call("hang", `{}`); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call past the host's timeout: %v", err)
	}
}

// The approval policy as it is at the call refuses it before it is
// forwarded; closing the namespace ends its providers' processes.
func TestApprovalRefusesAndCloseEndsProviders(t *testing.T) {
	r := newNS(t, 0)
	exe, _ := os.Executable()
	refuse := atomic.Bool{}
	r.ns.Approve = func(ctx context.Context, provider, tool string, args map[string]json.RawMessage) error {
		if refuse.Load() {
			return errors.New("the owner said no")
		}
		return nil
	}
	if _, err := r.call("create", `{"kind":"docs","title":"a"}`); err != nil {
		t.Fatal(err)
	}
	refuse.Store(true)
	if _, err := r.call("create", `{"kind":"docs","title":"b"}`); !errors.Is(err, ErrRefused) {
		t.Errorf("a refused call: %v", err)
	}
	running := func() int {
		n := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			exePath, _ := os.Readlink("/proc/" + e.Name() + "/exe")
			st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err == nil && exePath == exe && strings.Contains(string(env), "LNK_TEST_NS_PROVIDER=") && !strings.Contains(string(st), ") Z ") && strings.Contains(string(env), "LNK_TEST_NS_MARK="+r.store.Home+"\x00") {
				n++
			}
		}
		return n
	}
	if running() != 1 {
		t.Fatalf("%d providers run, want the one called", running())
	}
	r.ns.Close()
	deadline := time.Now().Add(30 * time.Second)
	for running() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("a provider still runs after close")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

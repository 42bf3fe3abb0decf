package toolbridge

import (
	"context"
	"strings"
	"sync"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/askbroker"
)

// owner is a way of asking for askbroker (a dialog's place) that answers
// as told, counting what it was asked.
type owner struct {
	mu    sync.Mutex
	allow bool
	asked int
}

func (o *owner) Way() string { return "dialog" }

func (o *owner) Ask(ctx context.Context, a *askbroker.Asked) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked++
	return o.allow, nil
}

func (o *owner) questions() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.asked
}

// pauseRig is a bridge asking through a real askbroker Broker, wired as
// lnk sandbox run wires it: its own refusals told to the broker.
func pauseRig(t *testing.T, pauseAfter int) (*rig, *owner, *askbroker.Broker) {
	o := &owner{}
	broker, err := askbroker.New(askbroker.Config{Dialog: o, Limits: askbroker.Limits{PauseAfter: pauseAfter}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	r := newRig(t, map[string]caps.Tool{"test": {}}, Settings{})
	r.bridge.Asker = &OwnerAsker{Broker: broker, Sandbox: "sb"}
	r.bridge.OnRefusal = func() { broker.CountRefusal("sb") }
	return r, o, broker
}

// A call the owner refuses counts once toward the sandbox's pause: the
// broker counts the owner's no, and the bridge does not count it again.
func TestAnOwnersNoCountsOnceTowardAPause(t *testing.T) {
	r, o, _ := pauseRig(t, 3)
	sid := r.initSession()
	for i := 1; i <= 3; i++ {
		if _, body := r.call(sid, "echo", "x"); !strings.Contains(body, "the owner said no") {
			t.Fatalf("call %d: %s (asked %d times: a refusal counted twice pauses the sandbox sooner)", i, body, o.questions())
		}
	}
	// Three refusals: paused, the next refused at once and not asked.
	if _, body := r.call(sid, "echo", "x"); !strings.Contains(body, "paused") {
		t.Fatalf("after 3 refusals of 3: %s", body)
	}
	if n := o.questions(); n != 3 {
		t.Errorf("the owner was asked %d times, want 3", n)
	}
	if n := r.bridge.Refused(); n != 4 {
		t.Errorf("the bridge counted %d refused calls, want 4", n)
	}
}

// A refusal the broker never saw (the bridge's own) still counts.
func TestTheBridgesOwnRefusalsCountTowardAPause(t *testing.T) {
	r, o, _ := pauseRig(t, 2)
	sid := r.initSession()
	for range 2 {
		if st, _, body := r.post("test", sid, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`); st != 403 {
			t.Fatalf("an id-less tools/call: %d %s", st, body)
		}
	}
	if _, body := r.call(sid, "echo", "x"); !strings.Contains(body, "paused") {
		t.Fatalf("after 2 refusals by the bridge: %s", body)
	}
	if n := o.questions(); n != 0 {
		t.Errorf("the owner was asked %d times in a pause", n)
	}
}

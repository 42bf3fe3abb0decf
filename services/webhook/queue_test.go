package webhook

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/store"
)

// TestABusyConversationsPostIs202AtOnce: with the real listener,
// lnk-webhook, way in, endpoint and the harness store's inbox: a post
// while the webhook's conversation is in a turn (held until the test
// lets it go) is answered 202 before that turn ends, and its turn runs
// after, once, as the stranger. The first post (the positive control of
// a free conversation) is 202 too.
func TestABusyConversationsPostIs202AtOnce(t *testing.T) {
	r := newRig(t, testLimits())
	r.listen(t, r.checker, WayInOf(r.a), testLimits(), t.Logf)
	dir := filepath.Join(t.TempDir(), "Agent")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chats, err := store.OpenChats(f)
	if err != nil {
		t.Fatal(err)
	}
	defer chats.Close()
	tr := &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	startHarnessAs(t, endpoint.Agent{ID: r.a.ID, Owner: r.a.Owner, Name: r.a.Name, Key: testKey(7), Turn: tr, Has: tr.has,
		Queue: func(m endpoint.Message) error {
			_, err := chats.Queue(m.Thread, store.Queued{From: m.From, Hops: m.Hops, Tools: []string{}, Text: m.Text})
			return err
		},
		RunQueued: func(ctx context.Context, thread string, ran func()) {
			p, err := chats.Pending(thread)
			if err != nil {
				t.Error(err)
				return
			}
			for _, q := range p {
				tr.Turn(ctx, endpoint.Message{Thread: thread, Text: q.Text, From: q.From, Hops: q.Hops}, func(string) {})
				if err := chats.Done(thread, q.ID); err != nil {
					t.Error(err)
				}
				ran()
			}
		}}, r.a, testKey(7))
	openWayIn(t, r.a)
	p := "/h/" + r.hook.ID
	want(t, "the first post", r.post(t, p, "d1", time.Now(), "application/json", []byte(`{"n":1}`), r.secret), 202)
	want(t, "a post while its conversation is in a turn", r.post(t, p, "d2", time.Now(), "application/json", []byte(`{"n":2}`), r.secret), 202)
	select {
	case <-tr.ended:
		t.Fatal("a turn ended before it was let go: the 202 waited for it")
	default:
	}
	if got := tr.messages(); len(got) != 1 {
		t.Fatalf("before the first turn ended, the harness ran %d turns", len(got))
	}
	if q, err := chats.Pending("webhook:ci"); err != nil || len(q) != 1 || q[0].Text != `{"n":2}` {
		t.Fatalf("the inbox holds %+v, %v", q, err)
	}
	want(t, "the queued post's repeat", r.post(t, p, "d2", time.Now(), "application/json", []byte(`{"n":2}`), r.secret), 401)
	close(tr.release)
	<-tr.ended
	<-tr.ended
	got := tr.messages()
	if len(got) != 2 || got[1] != (endpoint.Message{Thread: "webhook:ci", Text: `{"n":2}`, From: "stranger:webhook:ci", Hops: got[0].Hops}) {
		t.Fatalf("the harness got %+v", got)
	}
}

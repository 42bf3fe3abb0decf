package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	scheme "lnk.dev/lnk/helpers/keybroker/webhook"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
)

// harness is a Deliverer that records what it took; fail makes it refuse,
// hold makes it wait until released.
type harness struct {
	mu    sync.Mutex
	took  []string
	fail  error
	hold  chan struct{}
	enter chan struct{}
}

func (h *harness) Deliver(ctx context.Context, agentID, from, thread, text string) error {
	h.mu.Lock()
	hold, fail := h.hold, h.fail
	h.mu.Unlock()
	if hold != nil {
		h.enter <- struct{}{}
		<-hold
	}
	if fail != nil {
		return fail
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.took = append(h.took, from+"|"+thread+"|"+text)
	return nil
}

func (h *harness) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.took)
}

type rig struct {
	a      Agent
	h      *harness
	base   string
	secret *secret.Value // the text form
	hook   Hook
	log    *testenv.SyncBuffer
	// checker is the built lnk-webhook.
	checker string
	l       *Listener // the first listener
	cur     *Listener // the listener base reaches (rig.listen starts another)
}

func newRig(t testing.TB, lim Limits) *rig {
	t.Helper()
	checker := testenv.Bin(t, "lnk-webhook")
	a := testAgent(t)
	added, err := a.Add("ci", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(added.Secret.Destroy)
	r := &rig{a: a, h: &harness{}, secret: added.Secret, hook: added.Hook, log: &testenv.SyncBuffer{}, checker: checker}
	l, err := NewListener(a, checker, r.h, lim, func(f string, args ...any) { fmt.Fprintf(r.log, f+"\n", args...) })
	if err != nil {
		t.Fatal(err)
	}
	r.l, r.cur, r.base = l, l, serve(t, l)
	return r
}

func (r *rig) key(t testing.TB, text *secret.Value) *secret.Value {
	k, err := scheme.ParseSecret(append([]byte(nil), text.Bytes()...))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// post sends body to path signed in Link's scheme with text (nil: unsigned).
func (r *rig) post(t testing.TB, path, id string, ts time.Time, ctype string, body []byte, text *secret.Value) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if text != nil {
		k := r.key(t, text)
		defer k.Destroy()
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
		req.Header.Set("webhook-signature", scheme.Sign(k, id, ts.Unix(), body))
	}
	return send(t, req)
}

func send(t testing.TB, req *http.Request) int {
	t.Helper()
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// testClient bounds every request, so that a listener that wrongly lets
// a post wait on a held harness fails the test instead of hanging it.
var testClient = &http.Client{Timeout: 10 * time.Second}

func want(t *testing.T, what string, got, want int) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: %d, want %d", what, got, want)
	}
}

func testLimits() Limits {
	return Limits{MaxBody: DefaultLimits.MaxBody, BodyTimeout: 2 * time.Second, CheckTimeout: 5 * time.Second, InFlight: 64}
}

// TestListenerTakesSignedPostsOnly: a signed JSON or text post reaches the
// harness once as the webhook's stranger, 202; every other post is
// refused with the spec's status and never reaches it.
func TestListenerTakesSignedPostsOnly(t *testing.T) {
	r := newRig(t, testLimits())
	p := "/h/" + r.hook.ID
	now := time.Now()
	body := []byte(`{"event":"push"}`)

	want(t, "no webhook at the id", r.post(t, "/h/"+strings.Repeat("0", 32), "m1", now, "application/json", body, r.secret), 404)
	want(t, "not an id", r.post(t, "/h/../x", "m1", now, "application/json", body, r.secret), 404)
	want(t, "unsigned", r.post(t, p, "m1", now, "application/json", body, nil), 401)
	other, _ := scheme.NewSecret()
	otherText, _ := scheme.FormatSecret(other)
	want(t, "another secret", r.post(t, p, "m1", now, "application/json", body, otherText), 401)
	want(t, "six minutes old", r.post(t, p, "m1", now.Add(-6*time.Minute), "application/json", body, r.secret), 401)
	want(t, "six minutes ahead", r.post(t, p, "m1", now.Add(6*time.Minute), "application/json", body, r.secret), 401)
	req, _ := http.NewRequest(http.MethodPost, r.base+p, bytes.NewReader(body))
	req.Header.Set("webhook-id", "m1")
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", "v1,not base64!")
	want(t, "malformed signature", send(t, req), 400)
	want(t, "an image", r.post(t, p, "m1", now, "image/png", body, r.secret), 415)
	want(t, "JSON that isn't", r.post(t, p, "m1", now, "application/json", []byte("{"), r.secret), 415)
	want(t, "a body past 1 MiB", r.post(t, p, "m1", now, "application/json", make([]byte, 1<<20+1), r.secret), 413)
	// A body of no stated length is capped while it is read.
	chunked, _ := http.NewRequest(http.MethodPost, r.base+p, io.MultiReader(bytes.NewReader(make([]byte, 1<<20+1))))
	chunked.Header.Set("Content-Type", "text/plain")
	want(t, "a chunked body past 1 MiB", send(t, chunked), 413)
	if n := r.h.count(); n != 0 {
		t.Fatalf("%d refused posts reached the harness", n)
	}

	// The positive control, then its repeat.
	want(t, "signed JSON", r.post(t, p, "m1", now, "application/json", body, r.secret), 202)
	want(t, "signed text", r.post(t, p, "m2", now, "text/plain; charset=utf-8", []byte("hello"), r.secret), 202)
	want(t, "a repeat", r.post(t, p, "m1", now, "application/json", body, r.secret), 401)
	if got := strings.Join(r.h.took, "\n"); got != "stranger:webhook:ci|webhook:ci|"+string(body)+"\nstranger:webhook:ci|webhook:ci|hello" {
		t.Fatalf("the harness took:\n%s", got)
	}
	for _, f := range []string{SeenName, SeenLogName} {
		st, err := os.Lstat(filepath.Join(r.a.Home, ".lnk", "agents", r.a.ID, f))
		if err != nil || st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
			t.Fatalf("%s: %v %v", f, st, err)
		}
	}
	if b := onDisk(t, r.a); !strings.Contains(b, r.hook.ID+" m1") || !strings.Contains(b, r.hook.ID+" m2") {
		t.Fatalf("the record holds:\n%s", b)
	}
	if strings.Contains(r.log.String(), "whsec_") {
		t.Fatal("a secret was logged")
	}
}

// TestListenerRefusedPostIsKeptNowhere: a post the harness refused is
// answered 503 and its redelivery is taken.
func TestListenerRefusedPostIsKeptNowhere(t *testing.T) {
	r := newRig(t, testLimits())
	p := "/h/" + r.hook.ID
	r.h.fail = errors.New("the harness is not running")
	want(t, "harness down", r.post(t, p, "m1", time.Now(), "text/plain", []byte("hi"), r.secret), 503)
	r.h.fail = nil
	want(t, "redelivered", r.post(t, p, "m1", time.Now(), "text/plain", []byte("hi"), r.secret), 202)
	if r.h.count() != 1 {
		t.Fatal("the redelivery was not taken once")
	}
}

// TestListenerSamePostInFlight: while a post is being handed on, the same
// post is refused 401, and a different post past the cap of posts at once
// is refused 503.
func TestListenerSamePostInFlight(t *testing.T) {
	lim := testLimits()
	lim.InFlight = 2
	r := newRig(t, lim)
	p := "/h/" + r.hook.ID
	r.h.hold, r.h.enter = make(chan struct{}), make(chan struct{}, 4)
	first := make(chan int)
	go func() { first <- r.post(t, p, "m1", time.Now(), "text/plain", []byte("hi"), r.secret) }()
	<-r.h.enter
	want(t, "the same post in flight", r.post(t, p, "m1", time.Now(), "text/plain", []byte("hi"), r.secret), 401)
	second := make(chan int)
	go func() { second <- r.post(t, p, "m2", time.Now(), "text/plain", []byte("hi"), r.secret) }()
	<-r.h.enter
	want(t, "a third post at once past the cap", r.post(t, p, "m3", time.Now(), "text/plain", []byte("hi"), r.secret), 503)
	close(r.h.hold)
	want(t, "the first", <-first, 202)
	want(t, "the second", <-second, 202)
}

// TestListenerGitHub: GitHub's X-Hub-Signature-256, keyed with the
// secret's text, is taken; one with no delivery id is refused 503.
func TestListenerGitHub(t *testing.T) {
	r := newRig(t, testLimits())
	body := []byte(`{"zen":"Keep it logically awesome."}`)
	gh, _ := scheme.GitHubKey(append([]byte(nil), r.secret.Bytes()...))
	defer gh.Destroy()
	mk := func(delivery string, key *secret.Value) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, r.base+"/h/"+r.hook.ID, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(scheme.GitHubHeader, scheme.SignGitHub(key, body))
		if delivery != "" {
			req.Header.Set("X-GitHub-Delivery", delivery)
		}
		return req
	}
	want(t, "no delivery id", send(t, mk("", gh)), 503)
	wrong, _ := secret.FromString("not the secret")
	defer wrong.Destroy()
	want(t, "another secret", send(t, mk("d1", wrong)), 401)
	want(t, "signed by GitHub", send(t, mk("d1", gh)), 202)
	want(t, "its repeat", send(t, mk("d1", gh)), 401)
}

// TestListenerGitHubReplayUnderANewDeliveryID: GitHub signs the body
// alone, never its delivery id or a time, so whoever saw one signed post
// (a tunnel's log, a proxy) could send it again under a fresh
// X-GitHub-Delivery as often as they like. The record keys a GitHub
// post by its body's digest, so the same signed body is taken once in
// 30 days, whatever id it carries; another body (the positive control)
// is taken.
func TestListenerGitHubReplayUnderANewDeliveryID(t *testing.T) {
	r := newRig(t, testLimits())
	gh, _ := scheme.GitHubKey(append([]byte(nil), r.secret.Bytes()...))
	defer gh.Destroy()
	mk := func(delivery string, body []byte) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, r.base+"/h/"+r.hook.ID, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(scheme.GitHubHeader, scheme.SignGitHub(gh, body))
		req.Header.Set("X-GitHub-Delivery", delivery)
		return req
	}
	body := []byte(`{"action":"opened","number":1}`)
	want(t, "signed by GitHub", send(t, mk("d1", body)), 202)
	want(t, "the same body under a new delivery id", send(t, mk("d2", body)), 401)
	want(t, "another body", send(t, mk("d3", []byte(`{"action":"opened","number":2}`))), 202)
	if n := r.h.count(); n != 2 {
		t.Fatalf("the harness took %d posts, want 2", n)
	}
	if !strings.Contains(r.log.String(), "webhook: refused 401: ") {
		t.Fatalf("the replay's refusal not logged:\n%s", r.log)
	}
}

// TestListenerRereadsSecretsAtEachPost: after a roll both secrets are
// taken with no restart; after roll --done the previous one is refused;
// after remove the address answers 404.
func TestListenerRereadsSecretsAtEachPost(t *testing.T) {
	r := newRig(t, testLimits())
	p := "/h/" + r.hook.ID
	rolled, err := r.a.Roll("ci", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer rolled.Secret.Destroy()
	want(t, "the previous secret during the roll", r.post(t, p, "m1", time.Now(), "text/plain", []byte("a"), r.secret), 202)
	want(t, "the new secret", r.post(t, p, "m2", time.Now(), "text/plain", []byte("b"), rolled.Secret), 202)
	if err := r.a.RollDone("ci"); err != nil {
		t.Fatal(err)
	}
	want(t, "the previous secret after roll --done", r.post(t, p, "m3", time.Now(), "text/plain", []byte("c"), r.secret), 401)
	want(t, "the new secret after roll --done", r.post(t, p, "m4", time.Now(), "text/plain", []byte("d"), rolled.Secret), 202)
	if err := r.a.Remove("ci"); err != nil {
		t.Fatal(err)
	}
	want(t, "a removed webhook", r.post(t, p, "m5", time.Now(), "text/plain", []byte("e"), rolled.Secret), 404)
}

// TestListenerTimeouts: a check not answered in CheckTimeout is refused
// 503 and reaches no one; a body not read in BodyTimeout is refused.
func TestListenerTimeouts(t *testing.T) {
	lim := testLimits()
	lim.BodyTimeout = 300 * time.Millisecond
	r := newRig(t, lim)
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /h/%s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nab", r.hook.ID)
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64)
	n, _ := conn.Read(buf)
	// The answer may be 408 or the connection closed: never a 202.
	if got := string(buf[:n]); strings.Contains(got, " 202 ") || !strings.Contains(r.log.String(), "not read in time") {
		t.Fatalf("a body not sent in time: %q; log:\n%s", got, r.log)
	}

	slow := filepath.Join(t.TempDir(), "slow-check")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nexec sleep 30\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	lim = testLimits()
	lim.CheckTimeout = 300 * time.Millisecond
	stopServing(r.cur) // one listener per agent
	l, err := NewListener(r.a, slow, r.h, lim, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.ServeOn(ctx, ln)
	r.base = "http://" + ln.Addr().String()
	want(t, "a check not answered in time", r.post(t, "/h/"+r.hook.ID, "m1", time.Now(), "text/plain", []byte("hi"), r.secret), 503)
	if r.h.count() != 0 {
		t.Fatal("an unchecked post reached the harness")
	}
}

// TestRefusalBodiesAreFixed: a refused post is told its status's fixed
// text alone (400, 401, 404, 405, 413, 415, 503), never why: not what
// lnk-webhook said of its signature, nor why the harness didn't take
// it; the reason is logged once, as one line. A taken post (the
// positive control) is 202.
func TestRefusalBodiesAreFixed(t *testing.T) {
	r := newRig(t, testLimits())
	p := "/h/" + r.hook.ID
	now := time.Now()
	body := []byte(`{"event":"push"}`)
	signed := func(method, path, id, ctype string, b []byte, text *secret.Value) *http.Request {
		req, _ := http.NewRequest(method, r.base+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", ctype)
		if text != nil {
			k := r.key(t, text)
			defer k.Destroy()
			req.Header.Set("webhook-id", id)
			req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
			req.Header.Set("webhook-signature", scheme.Sign(k, id, now.Unix(), b))
		}
		return req
	}
	other, _ := scheme.NewSecret()
	otherText, _ := scheme.FormatSecret(other)
	malformed := signed(http.MethodPost, p, "f1", "application/json", body, nil)
	malformed.Header.Set("webhook-id", "f1")
	malformed.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	malformed.Header.Set("webhook-signature", "v1,not base64!")
	r.h.fail = errors.New("harness-secret-detail")
	for _, c := range []struct {
		what   string
		req    *http.Request
		status int
	}{
		{"a malformed signature", malformed, 400},
		{"another secret", signed(http.MethodPost, p, "f1", "application/json", body, otherText), 401},
		{"unsigned", signed(http.MethodPost, p, "f1", "application/json", body, nil), 401},
		{"no webhook", signed(http.MethodPost, "/h/"+strings.Repeat("0", 32), "f1", "application/json", body, r.secret), 404},
		{"a PUT", signed(http.MethodPut, p, "f1", "application/json", body, r.secret), 405},
		{"past 1 MiB", signed(http.MethodPost, p, "f1", "application/json", make([]byte, 1<<20+1), r.secret), 413},
		{"an image", signed(http.MethodPost, p, "f1", "image/png", body, r.secret), 415},
		{"the harness refused it", signed(http.MethodPost, p, "f1", "application/json", body, r.secret), 503},
	} {
		before := strings.Count(r.log.String(), "webhook: refused ")
		resp, err := testClient.Do(c.req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || string(got) != http.StatusText(c.status)+"\n" {
			t.Errorf("%s: %d %q, want %d and its fixed text alone", c.what, resp.StatusCode, got, c.status)
		}
		log := r.log.String()
		if n := strings.Count(log, "webhook: refused "); n != before+1 {
			t.Errorf("%s: %d refusals logged, want 1:\n%s", c.what, n-before, log)
		}
		if !strings.Contains(log, fmt.Sprintf("webhook: refused %d: ", c.status)) {
			t.Errorf("%s: its reason not logged:\n%s", c.what, log)
		}
	}
	if !strings.Contains(r.log.String(), "harness-secret-detail") {
		t.Errorf("the harness's refusal not logged:\n%s", r.log.String())
	}
	r.h.fail = nil
	want(t, "the post, taken", r.post(t, p, "f1", now, "application/json", body, r.secret), 202)
}

// TestListenerHoldsNoIdleConnection: a connection whose post was
// answered is closed, never kept idle for a next post that may never
// come: without it, anyone reaching the port (a public tunnel's
// stranger too) holds as many connections open as it likes, each past
// every timeout, after one request that needs no secret (a 404). The
// positive control: the answer itself reaches the poster whole.
func TestListenerHoldsNoIdleConnection(t *testing.T) {
	lim := testLimits()
	lim.BodyTimeout = 300 * time.Millisecond
	r := newRig(t, lim)
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /h/%s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi", strings.Repeat("0", 32))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the connection was kept open after its answer (%v); read %q", err, got)
	}
	if !strings.HasPrefix(string(got), "HTTP/1.1 404 ") || !strings.HasSuffix(string(got), http.StatusText(404)+"\n") {
		t.Fatalf("the answer: %q", got)
	}
}

// TestListenerBoundsOpenConnections: connections still sending their
// headers (a slowloris) hold at most Conns of the listener's slots; a
// post past them waits in the kernel's backlog, taking nothing of the
// listener's, until one closes, and is then taken (the positive
// control): without the cap each such connection held a goroutine and
// its buffers for its whole header time, however many were opened.
func TestListenerBoundsOpenConnections(t *testing.T) {
	lim := testLimits()
	lim.BodyTimeout = 10 * time.Second
	lim.Conns = 4
	r := newRig(t, lim)
	addr := strings.TrimPrefix(r.base, "http://")
	var slow []net.Conn
	for range lim.Conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "POST /h/"+r.hook.ID+" HTTP/1.1\r\nHost: x\r\n") // headers never ended
		slow = append(slow, c)
	}
	req, _ := http.NewRequest(http.MethodPost, r.base+"/h/"+r.hook.ID, strings.NewReader("hi"))
	req.Header.Set("Content-Type", "text/plain")
	k := r.key(t, r.secret)
	now := time.Now().Unix()
	req.Header.Set("webhook-id", "c1")
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now, 10))
	req.Header.Set("webhook-signature", scheme.Sign(k, "c1", now, []byte("hi")))
	k.Destroy()
	got := make(chan int, 1)
	go func() {
		resp, err := testClient.Do(req)
		if err != nil {
			got <- -1
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	select {
	case status := <-got:
		t.Fatalf("a post past %d connections still sending headers was answered %d at once", lim.Conns, status)
	case <-time.After(time.Second):
	}
	if r.h.count() != 0 {
		t.Fatal("a post past the connections' cap reached the harness while the cap was held")
	}
	for _, c := range slow {
		c.Close()
	}
	select {
	case status := <-got:
		want(t, "the post once a connection closed", status, 202)
	case <-time.After(9 * time.Second):
		t.Fatal("the post was never taken after the connections closed")
	}
}

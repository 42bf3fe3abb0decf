package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/askbroker"
	scheme "lnk.dev/lnk/helpers/keybroker/webhook"
)

// TestWebhookQuestion: {"question": …} alone, signed, is put to the owner
// (never to the agent) and answered 202 with its id; a signed GET of its
// status follows the owner's answer; unsigned, GitHub-signed, or another
// webhook's question is refused; a body with more than the question is a
// message to the agent.
func TestWebhookQuestion(t *testing.T) {
	r := newRig(t, testLimits())
	p := "/h/" + r.hook.ID
	resp := r.postRead(t, p, "q1", []byte(`{"question":"may I deploy main?"}`))
	if resp.code != 202 {
		t.Fatalf("a question: %d", resp.code)
	}
	var got struct{ Question string }
	if err := json.Unmarshal(resp.body, &got); err != nil || got.Question == "" {
		t.Fatalf("no question id: %s", resp.body)
	}
	if r.h.count() != 0 {
		t.Fatal("a question reached the agent")
	}
	store, err := askbroker.OpenStore(r.a.Home)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	q, err := store.Read(got.Question)
	if err != nil || q.Call != "may I deploy main?" || q.Sandbox != "webhook:ci" || q.Agent != "helper" {
		t.Fatalf("the question kept: %+v %v", q, err)
	}

	status := func(id string, sign bool) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, r.base+p+"/questions/"+id, nil)
		if sign {
			k := r.key(t, r.secret)
			defer k.Destroy()
			ts := time.Now().Unix()
			req.Header.Set("webhook-id", id)
			req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
			req.Header.Set("webhook-signature", scheme.Sign(k, req.Header.Get("webhook-id"), ts, nil))
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var s struct{ Status string }
		json.NewDecoder(res.Body).Decode(&s)
		return res.StatusCode, s.Status
	}
	if c, s := status(got.Question, true); c != 200 || s != "waiting" {
		t.Fatalf("status before the answer: %d %q", c, s)
	}
	if c, _ := status(got.Question, false); c != 401 {
		t.Fatalf("an unsigned GET: %d", c)
	}
	other := "a" + got.Question[1:] // another id: its first digit changed
	if got.Question[0] == 'a' {
		other = "b" + got.Question[1:]
	}
	if c, _ := status(other, true); c != 404 {
		t.Fatalf("another question: %d", c)
	}
	gh, _ := scheme.GitHubKey(append([]byte(nil), r.secret.Bytes()...))
	defer gh.Destroy()
	req, _ := http.NewRequest(http.MethodGet, r.base+p+"/questions/"+got.Question, nil)
	req.Header.Set(scheme.GitHubHeader, scheme.SignGitHub(gh, nil))
	req.Header.Set("X-GitHub-Delivery", "g1")
	want(t, "a GitHub-signed GET", send(t, req), 401)

	if err := store.Answer(got.Question, askbroker.Answer{Allow: true, By: "terminal"}); err != nil {
		t.Fatal(err)
	}
	if c, s := status(got.Question, true); c != 200 || s != "allowed" {
		t.Fatalf("status after the answer: %d %q", c, s)
	}

	if c := r.postRead(t, p, "q2", []byte(`{"question":"x","more":1}`)).code; c != 202 || r.h.count() != 1 {
		t.Fatalf("more than a question: %d, the agent took %d", c, r.h.count())
	}

	// A question that shows nothing once cleaned (zero-width, bidi and
	// control characters alone) is refused, never put to the owner as an
	// empty one; accents and emoji are text, kept as written.
	before, _ := store.List()
	if c := r.postRead(t, p, "q3", []byte(`{"question":"\u200b\u202e\u001b\n"}`)).code; c != http.StatusBadRequest || r.h.count() != 1 {
		t.Fatalf("an invisible question: %d, the agent took %d", c, r.h.count())
	}
	if after, _ := store.List(); len(after) != len(before) {
		t.Fatalf("an invisible question was kept: %+v", after)
	}
	resp = r.postRead(t, p, "q4", []byte(`{"question":"déployer main 🙂?"}`))
	if resp.code != 202 || json.Unmarshal(resp.body, &got) != nil {
		t.Fatalf("a question in accents and emoji: %d %s", resp.code, resp.body)
	}
	if q, err := store.Read(got.Question); err != nil || q.Call != "déployer main 🙂?" {
		t.Fatalf("the question kept: %+v %v", q, err)
	}
}

type answer struct {
	code int
	body []byte
}

func (r *rig) postRead(t *testing.T, path, id string, body []byte) answer {
	t.Helper()
	k := r.key(t, r.secret)
	defer k.Destroy()
	ts := time.Now().Unix()
	req, _ := http.NewRequest(http.MethodPost, r.base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", scheme.Sign(k, id, ts, body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return answer{res.StatusCode, b.Bytes()}
}

// TestQuestionStatusReplayRefused: a status GET signed for one question,
// replayed within its 5 minutes against the same webhook's other
// question, is refused 401 and logged once with its reason; before, the
// signature (over an empty body) named no question and the replay was
// answered. A post id with a . (which would make the signed
// id.timestamp.body ambiguous) is refused 400, logged once. The controls:
// each question's own GET is answered, and a plain id's post is taken.
func TestQuestionStatusReplayRefused(t *testing.T) {
	r := newRig(t, testLimits())
	p := "/h/" + r.hook.ID
	var ids []string
	for _, pid := range []string{"qa", "qb"} {
		resp := r.postRead(t, p, pid, []byte(`{"question":"may I deploy `+pid+`?"}`))
		var got struct{ Question string }
		if resp.code != 202 || json.Unmarshal(resp.body, &got) != nil || got.Question == "" {
			t.Fatalf("a question: %d %s", resp.code, resp.body)
		}
		ids = append(ids, got.Question)
	}
	k := r.key(t, r.secret)
	defer k.Destroy()
	ts := time.Now().Unix()
	get := func(question, signedID, sig string) int {
		req, _ := http.NewRequest(http.MethodGet, r.base+p+"/questions/"+question, nil)
		req.Header.Set("webhook-id", signedID)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("webhook-signature", sig)
		return send(t, req)
	}
	sigA := scheme.Sign(k, ids[0], ts, nil)
	if c := get(ids[0], ids[0], sigA); c != 200 {
		t.Fatalf("the control, the first question's own GET: %d", c)
	}
	before := strings.Count(r.log.String(), "webhook: refused ")
	if c := get(ids[1], ids[0], sigA); c != 401 {
		t.Fatalf("the first question's GET replayed against the second: %d", c)
	}
	log := r.log.String()
	if n := strings.Count(log, "webhook: refused ") - before; n != 1 || !strings.Contains(log, "signed with the question's id") {
		t.Fatalf("the replay's refusal logged %d times:\n%s", n, log)
	}
	if c := get(ids[1], ids[1], scheme.Sign(k, ids[1], ts, nil)); c != 200 {
		t.Fatalf("the control, the second question's own GET: %d", c)
	}

	before = strings.Count(r.log.String(), "webhook: refused ")
	if c := r.post(t, p, "a.1", time.Now(), "text/plain", []byte("hi"), r.secret); c != 400 {
		t.Fatalf("a post id with a dot: %d", c)
	}
	log = r.log.String()
	if n := strings.Count(log, "webhook: refused ") - before; n != 1 || !strings.Contains(log, "webhook-id holds a byte") {
		t.Fatalf("the dotted id's refusal logged %d times:\n%s", n, log)
	}
	if c := r.post(t, p, "a-1", time.Now(), "text/plain", []byte("hi"), r.secret); c != 202 {
		t.Fatalf("the control, a plain id's post: %d", c)
	}
}

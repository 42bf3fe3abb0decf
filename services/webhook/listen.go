package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"lnk.dev/lnk/helpers/keybroker/webhookcheck"
	"lnk.dev/lnk/internal/textsafe"
)

// Limits of the listener: the spec's, which tests shorten.
type Limits struct {
	MaxBody      int64         // 1 MiB: a longer body is refused 413 before the rest is read
	BodyTimeout  time.Duration // 10 s to read a body
	CheckTimeout time.Duration // 30 s for lnk-webhook's verdict
	InFlight     int           // 64 posts at once
	// Conns bounds the connections open at once, each a post's or one
	// still sending its headers; past it a connection waits in the
	// kernel's backlog until one closes. 0 is DefaultConns.
	Conns int
	// MaxSeen bounds hooks-seen.json's size, and so the ids of the last
	// 30 days it keeps: past it a post is refused 503 before it is
	// handed on. 0 (and anything larger) is 64 MiB, the most that is
	// read when the listener starts.
	MaxSeen int64
}

// DefaultConns is the connections open at once when Limits.Conns is 0:
// four for each post taken at once, so posters still sending their
// headers (each for at most BodyTimeout) never hold the listener's
// memory without bound.
const DefaultConns = 256

// DefaultLimits are the spec's.
var DefaultLimits = Limits{MaxBody: webhookcheck.MaxBody, BodyTimeout: 10 * time.Second, CheckTimeout: 30 * time.Second, InFlight: 64}

// Listener takes an agent's webhook posts.
type Listener struct {
	agent   Agent
	checker string // lnk-webhook's path
	deliver Deliverer
	limits  Limits
	logf    func(format string, args ...any)
	now     func() time.Time
	sem     chan struct{}
	seen    *seen
	dir     *os.File
	checks  *checkers
	hooks   settingsCache
	secrets secretsCache
}

// NewListener is agent a's listener, checking each post with the
// lnk-webhook at checker and handing taken ones to d. logf gets each
// refusal once, with its reason (never a secret).
func NewListener(a Agent, checker string, d Deliverer, l Limits, logf func(string, ...any)) (*Listener, error) {
	if d == nil || checker == "" {
		return nil, errors.New("webhook listener: a checker and a deliverer are needed")
	}
	dir, err := a.dir()
	if err != nil {
		return nil, err
	}
	sn, err := openSeen(dir, l.MaxSeen)
	if err != nil {
		dir.Close()
		if errors.Is(err, ErrListening) {
			return nil, fmt.Errorf("agent %s: %w", a.Name, err)
		}
		return nil, err
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Listener{agent: a, checker: checker, deliver: d, limits: l, logf: logf, now: time.Now,
		sem: make(chan struct{}, l.InFlight), seen: sn, dir: dir, checks: newCheckers(checker, l.InFlight, logf)}, nil
}

// Close stops the listener's lnk-webhook processes and releases the
// settings folder.
func (l *Listener) Close() error {
	l.checks.close()
	l.secrets.close()
	l.seen.close()
	return l.dir.Close()
}

// Serve listens on 127.0.0.1 at the port in the agent's webhooks.json
// until ctx ends. It never listens on another address.
func (l *Listener) Serve(ctx context.Context) error {
	s, err := l.agent.Load()
	if err != nil {
		return err
	}
	if s.Port == 0 {
		return errors.New("the agent has no webhook, so no port (lnk agent webhook add makes one)")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)))
	if err != nil {
		return err
	}
	return l.ServeOn(ctx, ln)
}

// ServeOn serves on ln until ctx ends.
func (l *Listener) ServeOn(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: l, ReadHeaderTimeout: l.limits.BodyTimeout, MaxHeaderBytes: 64 << 10}
	// One post per connection: a connection kept idle for a next post
	// would be bounded by no timeout (ReadHeaderTimeout starts at the
	// next request's first byte), so anyone reaching the port could
	// hold connections open without end after one unsigned 404.
	srv.SetKeepAlivesEnabled(false)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	conns := l.limits.Conns
	if conns <= 0 {
		conns = DefaultConns
	}
	err := srv.Serve(newLimitListener(ln, conns))
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// refuse answers status with its fixed text alone (http.StatusText),
// logging why once, as one line, in the agent's log. The poster is told
// nothing more: why a signature failed, what lnk-webhook said, or why
// the harness didn't take the post would help whoever forges one.
func (l *Listener) refuse(w http.ResponseWriter, status int, why string) {
	l.logf("webhook: refused %d: %s", status, textsafe.Line(why))
	http.Error(w, http.StatusText(status), status)
}

// ServeHTTP takes one post (or a question's status).
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case l.sem <- struct{}{}:
		defer func() { <-l.sem }()
	default:
		l.refuse(w, http.StatusServiceUnavailable, "too many posts at once")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/h/")
	if !ok {
		l.refuse(w, http.StatusNotFound, "no webhook here")
		return
	}
	id, question, _ := strings.Cut(rest, "/questions/")
	if CheckID(id) != nil {
		l.refuse(w, http.StatusNotFound, "no webhook here")
		return
	}
	settings, err := l.hooks.load(int(l.dir.Fd()))
	if err != nil {
		l.refuse(w, http.StatusServiceUnavailable, "the webhooks' record can't be read: "+err.Error())
		return
	}
	hook := settings.ByID(id)
	if hook == nil {
		l.refuse(w, http.StatusNotFound, "no webhook here")
		return
	}
	switch {
	case question == "" && r.Method == http.MethodPost && !strings.Contains(rest, "/"):
	case question != "" && r.Method == http.MethodGet:
	default:
		l.refuse(w, http.StatusMethodNotAllowed, "a webhook takes POST, and GET of a question")
		return
	}
	body, status, why := l.readBody(w, r)
	if status != 0 {
		l.refuse(w, status, why)
		return
	}
	v := l.check(*hook, r, body)
	if v.Status != http.StatusOK {
		l.refuse(w, v.Status, v.Reason)
		return
	}
	if question != "" {
		l.questionStatus(w, *hook, v, question, body)
		return
	}
	text, status, why := contentOf(r, body)
	if status != 0 {
		l.refuse(w, status, why)
		return
	}
	if q, ok := questionOf(r, body); ok {
		l.ask(w, *hook, v, q, body)
		return
	}
	l.hand(w, r, *hook, v, text, body)
}

// readBody reads at most MaxBody bytes within BodyTimeout.
func (l *Listener) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, string) {
	if r.ContentLength > l.limits.MaxBody {
		return nil, http.StatusRequestEntityTooLarge, "a body is at most 1 MiB"
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(l.limits.BodyTimeout)); err != nil {
		return nil, http.StatusInternalServerError, "no read deadline: " + err.Error()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, l.limits.MaxBody))
	rc.SetReadDeadline(time.Time{})
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, "a body is at most 1 MiB"
	case err != nil:
		return nil, http.StatusRequestTimeout, "the body was not read in time: " + err.Error()
	}
	return body, 0, ""
}

// check hands the post to the webhook's lnk-webhook with its secrets,
// read now, and waits at most CheckTimeout for the verdict. A 200 must
// name the id the post's own header carries in the scheme it names.
func (l *Listener) check(h Hook, r *http.Request, body []byte) webhookcheck.Verdict {
	unavailable := func(why string) webhookcheck.Verdict {
		return webhookcheck.Verdict{Status: http.StatusServiceUnavailable, Reason: why}
	}
	sec, release, err := l.secrets.get(l.agent.Home, h, l.now())
	if err != nil {
		return unavailable("the webhook's secrets can't be read: " + err.Error())
	}
	defer release()
	c, err := l.checks.get(h.ID)
	if err != nil {
		return unavailable(err.Error())
	}
	req := requestOf(r, body)
	v, err := c.check(webhookcheck.Secrets{Current: sec.Current, Previous: sec.Previous, PreviousUntil: sec.PreviousUntil}, req, l.limits.CheckTimeout)
	if err != nil {
		return unavailable(err.Error())
	}
	if v.Status != http.StatusOK {
		return v
	}
	idHeader := map[string]string{"link": "webhook-id", "github": "x-github-delivery"}[v.Scheme]
	if idHeader == "" || v.ID != req.Headers[idHeader] {
		return unavailable("lnk-webhook named an id the post does not carry")
	}
	return v
}

// contentOf is the post's text: JSON or UTF-8 text, else 415.
func contentOf(r *http.Request, body []byte) (string, int, string) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case err != nil:
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		if json.Valid(body) {
			return string(body), 0, ""
		}
		return "", http.StatusUnsupportedMediaType, "the body is not JSON"
	case mt == "text/plain":
		if utf8.Valid(body) {
			return string(body), 0, ""
		}
		return "", http.StatusUnsupportedMediaType, "the body is not UTF-8 text"
	}
	return "", http.StatusUnsupportedMediaType, "a post carries JSON or text"
}

// hand gives a checked post to the harness: 401 for a repeat or the same
// post in flight, 503 (kept nowhere) when the harness refused it or could
// not be reached, 202 once it took it and its id is on disk; 500 when it
// took it but the id could not be written (still refused as a repeat
// while the listener runs, and written with the next post's).
func (l *Listener) hand(w http.ResponseWriter, r *http.Request, h Hook, v webhookcheck.Verdict, text string, body []byte) {
	key := seenKey(h, v, body)
	if err := l.seen.begin(key, l.now()); err != nil {
		l.refuseUnseen(w, err)
		return
	}
	if err := l.deliver.Deliver(r.Context(), l.agent.ID, From(h.Name), Thread(h.Name), text); err != nil {
		l.seen.drop(key)
		l.refuse(w, http.StatusServiceUnavailable, "the agent did not take the post: "+err.Error())
		return
	}
	if err := l.seen.take(key, l.now()); err != nil {
		l.refuse(w, http.StatusInternalServerError, "the agent took the post, but "+SeenName+" could not be written: "+err.Error())
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// seenKey is a post's key in the record of taken posts: the webhook's id
// and the post's. Link's scheme signs the post's id, so it is the id; GitHub
// signs the body alone, so its unsigned delivery id would let a signed
// post be sent again under a fresh one: a GitHub post is keyed by its
// body's SHA-256, the same signed body taken once whatever id it carries.
func seenKey(h Hook, v webhookcheck.Verdict, body []byte) string {
	if v.Scheme == "link" {
		return h.ID + " " + v.ID
	}
	sum := sha256.Sum256(body)
	return h.ID + " " + v.Scheme + "-sha256:" + hex.EncodeToString(sum[:])
}

// refuseUnseen answers a post the record would not take in flight: 401
// for a repeat, 503 when the record is full (its reason logged with a
// hint saying what frees room).
func (l *Listener) refuseUnseen(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrFull) {
		l.refuse(w, http.StatusServiceUnavailable, fullReason(l.seen.limit, l.agent.Name))
		return
	}
	l.refuse(w, http.StatusUnauthorized, err.Error())
}

// requestOf keeps r's signature headers and body for lnk-webhook.
func requestOf(r *http.Request, body []byte) webhookcheck.Request {
	h := map[string]string{}
	for _, n := range webhookcheck.Headers {
		if v := r.Header.Get(n); v != "" {
			h[n] = v
		}
	}
	return webhookcheck.Request{Method: r.Method, Headers: h, Length: len(body), Body: body}
}

package hub

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Errors Run refuses with.
var (
	ErrRunning   = errors.New("another hub holds this socket's lock")
	ErrRedefined = errors.New("the tool was defined again: its key names another hub")
)

// Config is what a hub is started with (lnk-toolhub's flags).
type Config struct {
	Dir  string        // Link's settings folder, ~/.lnk
	Name string        // the tool
	Key  string        // what the bridge computed; refused if it no longer names the tool
	Idle time.Duration // with no session for this long, the hub stops (5 minutes)
}

// Hub is one shared tool's server and its sessions.
type Hub struct {
	cfg   Config
	paths Paths
	log   *capLog
	srv   *serverProc

	mu          sync.Mutex
	sessions    map[*session]struct{}
	lastSession time.Time
	nextID      uint64
	pending     map[uint64]pending
	tokens      map[string]pending // the hub's progress token → who asked
	initResult  json.RawMessage
	initWaiting []pending // initializes waiting for the first one's result
	initSent    bool
	initialized bool // notifications/initialized was forwarded
}

// pending is a request the server has not answered: whose, and its own id.
type pending struct {
	s     *session
	id    json.RawMessage
	token string // the hub's progress token, or ""
	orig  json.RawMessage
	init  bool
}

// Run holds the lock, starts the server and serves sessions until ctx
// ends, the server ends, or the hub has been idle (or redefined and left
// by every session).
func Run(ctx context.Context, cfg Config) error {
	if cfg.Idle <= 0 {
		cfg.Idle = 5 * time.Minute
	}
	if err := CheckDir(cfg.Dir); err != nil {
		return err
	}
	if filepath.Base(cfg.Dir) != ".lnk" {
		return fmt.Errorf("%w: %s is not a .lnk folder", ErrDir, cfg.Dir)
	}
	if err := tooldef.CheckName(cfg.Name); err != nil {
		return err
	}
	h := &Hub{cfg: cfg, paths: PathsOf(cfg.Dir, cfg.Name, cfg.Key), sessions: map[*session]struct{}{}, pending: map[uint64]pending{}, tokens: map[string]pending{}, lastSession: time.Now()}
	lock, err := takeLock(h.paths.Lock)
	if err != nil {
		return err
	}
	defer unix.Close(lock)
	def, err := h.current()
	if err != nil {
		return err
	}
	if h.log, err = openLog(h.paths.Log); err != nil {
		def.Destroy()
		return err
	}
	defer h.log.Close()
	h.srv, err = startServer(def, h.log)
	def.Destroy()
	if err != nil {
		h.log.line("not started: " + err.Error())
		return err
	}
	h.log.line("started " + h.srv.how)
	defer h.srv.stop()
	os.Remove(h.paths.Socket) // a dead hub's; the lock is ours
	l, err := net.Listen("unix", h.paths.Socket)
	if err != nil {
		return err
	}
	defer os.Remove(h.paths.Socket)
	defer l.Close()
	if err := os.Chmod(h.paths.Socket, 0o600); err != nil {
		return err
	}
	h.mu.Lock()
	h.lastSession = time.Now() // idle is counted from when it listens
	h.mu.Unlock()
	go h.accept(l)
	go h.readServer()
	why := h.wait(ctx)
	h.log.line("stopping: " + why)
	l.Close() // no session starts while the others end
	h.endAll(why)
	return nil
}

// current loads the tool's definition and checks it still has cfg.Key.
func (h *Hub) current() (*tooldef.Definition, error) {
	def, err := tooldef.Store{Home: filepath.Dir(h.cfg.Dir)}.Load(h.cfg.Name)
	if err != nil {
		return nil, err
	}
	key, err := Key(h.cfg.Dir, def)
	if err != nil || key != h.cfg.Key || !def.Shared {
		def.Destroy()
		if err == nil {
			err = ErrRedefined
		}
		return nil, err
	}
	return def, nil
}

// takeLock opens (0600) and locks the hub's lock file through
// internal/ownerfile: no link, and only a regular file of the owner's.
func takeLock(path string) (int, error) {
	dir, name := filepath.Split(path)
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	fd, err := ownerfile.Open(dfd, name, unix.O_RDWR|unix.O_CREAT|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := ownerfile.Check(fd, ownerfile.Private); err != nil {
		unix.Close(fd)
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		return -1, ErrRunning
	}
	return fd, nil
}

func (h *Hub) wait(ctx context.Context) string {
	tick := time.NewTicker(min(max(h.cfg.Idle/4, 20*time.Millisecond), time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return "asked to stop"
		case <-h.srv.done:
			return "the server ended"
		case now := <-tick.C:
			h.mu.Lock()
			n, since := len(h.sessions), now.Sub(h.lastSession)
			h.mu.Unlock()
			if n > 0 {
				continue
			}
			if since >= h.cfg.Idle {
				return "idle"
			}
			if def, err := h.current(); err != nil {
				return "no session, and " + err.Error()
			} else {
				def.Destroy()
			}
		}
	}
}

func (h *Hub) accept(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		s := newSession(h, c)
		h.mu.Lock()
		h.sessions[s] = struct{}{}
		h.mu.Unlock()
		go s.write()
		go s.read()
	}
}

// drop forgets an ended session.
func (h *Hub) drop(s *session) {
	h.mu.Lock()
	delete(h.sessions, s)
	if len(h.sessions) == 0 {
		h.lastSession = time.Now()
	}
	h.mu.Unlock()
}

func (h *Hub) endAll(why string) {
	h.mu.Lock()
	var ss []*session
	for s := range h.sessions {
		ss = append(ss, s)
	}
	h.mu.Unlock()
	for _, s := range ss {
		s.end(why)
	}
}

// Sessions counts the live sessions.
func (h *Hub) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// readServer routes what the server writes until its output ends.
func (h *Hub) readServer() {
	br := bufio.NewReaderSize(h.srv.out, 64<<10)
	for {
		line, err := readLine(br, MaxLine)
		if len(line) > 0 {
			h.fromServer(line)
		}
		if err != nil {
			if errors.Is(err, errTooLong) {
				h.log.line("refused: " + err.Error())
			}
			h.srv.stop()
			return
		}
	}
}

func (h *Hub) fromServer(line []byte) {
	m, idAt, err := parse(line)
	if err != nil {
		return
	}
	switch {
	case m.isResponse():
		id, err := strconv.ParseUint(string(m.ID), 10, 64)
		if err != nil {
			return
		}
		h.answered(id, &m, line, idAt)
	case m.isRequest():
		if m.Method == "ping" {
			h.srv.answer(resultLine(m.ID, json.RawMessage(`{}`)))
			return
		}
		h.srv.answer(errorLine(m.ID, -32601, "refused outside the sandbox: Link's hub answers no request of a server"))
	case strings.HasSuffix(m.Method, "/list_changed"):
		h.mu.Lock()
		var ss []*session
		for s := range h.sessions {
			ss = append(ss, s)
		}
		h.mu.Unlock()
		for _, s := range ss {
			s.send(line)
		}
	case m.Method == "notifications/progress":
		tok := progressTokenOf(m.Params)
		h.mu.Lock()
		p, ok := h.tokens[tok]
		h.mu.Unlock()
		if ok {
			m.Params = setField(m.Params, "progressToken", p.orig)
			b, _ := json.Marshal(&m)
			p.s.send(b)
		}
	}
}

func progressTokenOf(params json.RawMessage) string {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
	}
	json.Unmarshal(params, &p)
	return string(p.Token)
}

// answered hands the answer to id back to the session that asked, with
// its own id; the first initialize's result answers those that waited.
func (h *Hub) answered(id uint64, m *message, line []byte, idAt span) {
	h.mu.Lock()
	p, ok := h.pending[id]
	delete(h.pending, id)
	if p.token != "" {
		delete(h.tokens, p.token)
	}
	if ok && p.s.ids[string(p.id)] == id {
		delete(p.s.ids, string(p.id))
	}
	var waiters []pending
	if ok && p.init {
		waiters, h.initWaiting = h.initWaiting, nil
		if len(m.Result) > 0 {
			h.initResult = m.Result
		} else {
			h.initSent = false
		}
	}
	h.mu.Unlock()
	if !ok {
		return
	}
	for _, w := range append([]pending{p}, waiters...) {
		w.s.send(withID(line, idAt, w.id))
	}
}

package hub

import (
	"bufio"
	"encoding/json"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
)

// MaxUnread is how many answers a session may leave unread before the
// hub ends it.
const MaxUnread = 64

// session is one connection to the hub's socket.
type session struct {
	h    *Hub
	c    net.Conn
	out  chan []byte
	done chan struct{}
	once sync.Once
	ids  map[string]uint64 // the session's id → the hub's, while pending (h.mu)

	// wmu is held by whoever writes to c; queued counts lines handed to
	// the session's writer and not yet written, so a line written at once
	// never overtakes one queued before it.
	wmu    sync.Mutex
	queued atomic.Int32
}

func newSession(h *Hub, c net.Conn) *session {
	return &session{h: h, c: c, out: make(chan []byte, MaxUnread), done: make(chan struct{}), ids: map[string]uint64{}}
}

// send hands a line to the session. When nothing is queued before it, it
// is written at once if the socket takes it whole without waiting; the
// rest goes to the session's own writer, so a session that stops reading
// holds up no other. A session with MaxUnread lines unread is ended.
func (s *session) send(b []byte) {
	select {
	case <-s.done:
		return
	default:
	}
	line := append(b[:len(b):len(b)], '\n')
	if s.wmu.TryLock() {
		if s.queued.Load() == 0 {
			n := s.writeNow(line)
			if n == len(line) {
				s.wmu.Unlock()
				return
			}
			line = line[n:]
		}
		s.queue(line)
		s.wmu.Unlock()
		return
	}
	s.queue(line)
}

func (s *session) queue(line []byte) {
	s.queued.Add(1)
	select {
	case s.out <- line:
	default:
		s.queued.Add(-1)
		s.end("refused: " + strconv.Itoa(MaxUnread) + " answers unread")
	}
}

// writeNow writes what the socket takes of line without waiting for it,
// and says how much that was.
func (s *session) writeNow(line []byte) int {
	sc, ok := s.c.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	rc.Write(func(fd uintptr) bool {
		for n < len(line) {
			m, err := syscall.Write(int(fd), line[n:])
			if err == syscall.EINTR {
				continue
			}
			if err != nil || m <= 0 {
				break
			}
			n += m
		}
		return true
	})
	return n
}

func (s *session) end(why string) {
	s.once.Do(func() {
		close(s.done)
		s.c.Close()
		s.h.drop(s)
		s.h.log.line("session ended: " + why)
	})
}

// write is the session's own writer.
func (s *session) write() {
	for {
		select {
		case line := <-s.out:
			s.wmu.Lock()
			_, err := s.c.Write(line)
			s.queued.Add(-1)
			s.wmu.Unlock()
			if err != nil {
				s.end("it stopped reading")
				return
			}
		case <-s.done:
			return
		}
	}
}

func (s *session) read() {
	br := bufio.NewReaderSize(s.c, 64<<10)
	for {
		line, err := readLine(br, MaxLine+IDRoom)
		if len(line) > 0 {
			s.handle(line)
		}
		if err != nil {
			why := "it closed"
			if err == errTooLong {
				why = "refused: " + err.Error()
			}
			s.end(why)
			return
		}
	}
}

func (s *session) handle(line []byte) {
	h := s.h
	m, idAt, err := parse(line)
	if err != nil || m.JSONRPC != "2.0" {
		return
	}
	switch {
	case m.isRequest() && m.Method == "ping":
		s.send(resultLine(m.ID, json.RawMessage(`{}`)))
	case m.isRequest():
		h.mu.Lock()
		if m.Method == "initialize" && h.initResult != nil {
			res := h.initResult
			h.mu.Unlock()
			s.send(resultLine(m.ID, res))
			return
		}
		p := pending{s: s, id: m.ID, init: m.Method == "initialize"}
		if p.init && h.initSent {
			h.initWaiting = append(h.initWaiting, p)
			h.mu.Unlock()
			return
		}
		h.initSent = h.initSent || p.init
		h.nextID++
		hid := h.nextID
		if tok := progressToken(m.Params); tok != nil {
			p.orig, p.token = tok, strconv.Quote("lnk-hub-"+strconv.FormatUint(hid, 10))
			h.tokens[p.token] = p
			m.Params = withProgressToken(m.Params, json.RawMessage(p.token))
		}
		h.pending[hid] = p
		s.ids[string(m.ID)] = hid
		h.mu.Unlock()
		hubID := []byte(strconv.FormatUint(hid, 10))
		if p.token != "" {
			m.ID = hubID
			b, _ := json.Marshal(&m)
			h.srv.send(b)
			return
		}
		h.srv.send(withID(line, idAt, hubID))
	case m.Method == "notifications/initialized":
		h.mu.Lock()
		first := !h.initialized
		h.initialized = true
		h.mu.Unlock()
		if first {
			h.srv.send(line)
		}
	case m.Method == "notifications/cancelled":
		var p struct {
			ID json.RawMessage `json:"requestId"`
		}
		json.Unmarshal(m.Params, &p)
		h.mu.Lock()
		hid, ok := s.ids[string(p.ID)]
		if pd, has := h.pending[hid]; ok && has && pd.s == s && !pd.init {
			// A server need not answer a request once cancelled (the
			// bridge has answered its client already): forgotten now,
			// or it would be held for the hub's life.
			delete(h.pending, hid)
			if pd.token != "" {
				delete(h.tokens, pd.token)
			}
			delete(s.ids, string(p.ID))
		}
		h.mu.Unlock()
		if ok {
			m.Params = setField(m.Params, "requestId", json.RawMessage(strconv.FormatUint(hid, 10)))
			b, _ := json.Marshal(&m)
			h.srv.send(b)
		}
	}
}

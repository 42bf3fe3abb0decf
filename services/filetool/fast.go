package filetool

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fastCalls answers the one message a session sends over and over — a
// plain tools/call of an offered tool — without the go-sdk server, to the
// same bytes the go-sdk would write (TestFastCallsAreTheGoSDKs). The
// go-sdk decodes such a call four times over, each decode with a 32 KiB
// buffer of its own, runs it on a goroutine of its own through its
// middleware and encodes the result again with reflection: about half of
// serve's CPU a 4 KiB read. Every other message, and any call it is not
// sure of, goes to the go-sdk, which stays the protocol's reference.
//
// A call is taken only in a session the go-sdk initialized, to a
// protocol with no resultType (as [plainText]), after the client said
// notifications/initialized; and only in its plainest spelling: the keys
// jsonrpc ("2.0"), id (an integer float64 holds exactly, or a string of
// printable ASCII without escapes), method ("tools/call") and params,
// each once; params of name (an offered tool) and arguments only, no
// _meta; nesting the go-sdk's depth cap cannot reach.
//
// Like the go-sdk, it runs its calls off the goroutine that reads, so a
// call can be cancelled by notifications/cancelled (which still goes to
// the go-sdk too), and answers each even after the client has gone.
type fastCalls struct {
	o      Offer
	names  []string // the offer's tools
	sb     *Sandboxed
	server *mcp.Server

	// Read's goroutine alone (the go-sdk reads from one).
	initialized bool               // the client said notifications/initialized
	session     *mcp.ServerSession // found once initialized

	mu       sync.Mutex
	inFlight map[jsonrpc.ID]context.CancelFunc
	queue    []fastCall // taken, not yet run
	working  bool       // a worker runs the queue
	closed   bool       // the connection closed: take no more
	wg       sync.WaitGroup
}

// fastCall is one call taken.
type fastCall struct {
	c    *lineConn
	ctx  context.Context
	id   jsonrpc.ID
	name string
	args json.RawMessage
}

func newFastCalls(o Offer, sb *Sandboxed, server *mcp.Server) *fastCalls {
	f := &fastCalls{o: o, sb: sb, server: server, inFlight: map[jsonrpc.ID]context.CancelFunc{}}
	for _, t := range o.Tools() {
		f.names = append(f.names, t.name)
	}
	return f
}

// take runs line as a fast call, answering it on c, and says whether it
// did; a line it does not take is left to the go-sdk, untouched. The
// calls run in the order taken, on one worker goroutine while there are
// any (the sandboxed process runs them one at a time anyway), whose stack
// grows to a call's depth once rather than at every call.
func (f *fastCalls) take(c *lineConn, line []byte) bool {
	if !f.ready() {
		return false
	}
	id, name, args, ok := plainCall(line, f.names)
	if !ok {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.inFlight[id]; dup || f.closed {
		return false // an id in use, or a session ending: the go-sdk says what it says of that
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.inFlight[id] = cancel
	f.queue = append(f.queue, fastCall{c: c, ctx: ctx, id: id, name: name, args: args})
	f.wg.Add(1)
	if !f.working {
		f.working = true
		go f.work()
	}
	return true
}

// work runs the queue until it is empty.
func (f *fastCalls) work() {
	for {
		f.mu.Lock()
		if len(f.queue) == 0 {
			f.working = false
			f.queue = nil
			f.mu.Unlock()
			return
		}
		fc := f.queue[0]
		f.queue[0] = fastCall{}
		f.queue = f.queue[1:]
		f.mu.Unlock()
		f.run(fc)
	}
}

// run runs one call and answers it.
func (f *fastCalls) run(fc fastCall) {
	defer f.wg.Done()
	res := callResult(fc.ctx, f.o, f.sb, fc.name, fc.args)
	f.mu.Lock()
	cancel := f.inFlight[fc.id]
	delete(f.inFlight, fc.id) // before the answer: the client may use the id again once it has it
	f.mu.Unlock()
	cancel()
	body, err := textResult{res}.MarshalJSON()
	if err == nil {
		err = fc.c.writeResult(fc.id, body)
	}
	_ = err // as the go-sdk: an answer that cannot be written is dropped
}

// ready says whether the session takes fast calls: initialized by the
// go-sdk, to a protocol with no resultType, and the client said so.
func (f *fastCalls) ready() bool {
	if !f.initialized {
		return false
	}
	if f.session == nil {
		for ss := range f.server.Sessions() {
			f.session = ss
			break
		}
		if f.session == nil {
			return false
		}
	}
	p := f.session.InitializeParams()
	return p != nil && p.ProtocolVersion != "" && p.ProtocolVersion < mrtrVersion
}

// saw notes a message the go-sdk is given: notifications/initialized
// opens the fast path; notifications/cancelled cancels a fast call.
func (f *fastCalls) saw(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() {
		return
	}
	switch req.Method {
	case "notifications/initialized":
		f.initialized = true
	case "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return
		}
		id, err := jsonrpc.MakeID(p.RequestID) // as the go-sdk makes it
		if err != nil {
			return
		}
		f.mu.Lock()
		cancel := f.inFlight[id]
		f.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

// close takes no more calls and waits for those taken to be answered.
func (f *fastCalls) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.wg.Wait()
}

// maxSafeID is the largest integer a float64 holds exactly: the go-sdk
// reads an id as a float64, so a larger one is left to it.
const maxSafeID = 1 << 53

// plainCall is line as a plain tools/call of one of the tools named, or
// ok false.
func plainCall(line []byte, names []string) (id jsonrpc.ID, name string, args json.RawMessage, ok bool) {
	if bytes.Count(line, []byte("{"))+bytes.Count(line, []byte("[")) > 100 {
		return id, "", nil, false // nesting that might reach the go-sdk's cap: its own answer
	}
	if id, name, args, ok = compactCall(line, names); ok {
		return id, name, args, true
	}
	return decodedCall(line, names)
}

// compactCall is plainCall of a line in the spellings clients write:
// keys in the go-sdk's order (params' name before arguments) or in
// sorted order (arguments first), no space. The arguments are checked to
// be one JSON value, the rest matched byte for byte; any other line is
// not taken here.
func compactCall(line []byte, names []string) (id jsonrpc.ID, name string, args json.RawMessage, ok bool) {
	const method = `,"method":"tools/call","params":{`
	rest, ok := bytes.CutPrefix(line, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		return id, "", nil, false
	}
	// An id that plainID takes holds no quote, so the first such text ends it.
	i := bytes.Index(rest, []byte(method))
	if i < 0 {
		return id, "", nil, false
	}
	if id, ok = plainID(rest[:i]); !ok {
		return id, "", nil, false
	}
	rest, ok = bytes.CutSuffix(rest[i+len(method):], []byte("}}"))
	if !ok {
		return id, "", nil, false
	}
	if r, first := bytes.CutPrefix(rest, []byte(`"name":"`)); first { // name, then arguments if any
		for _, n := range names {
			if after, found := bytes.CutPrefix(r, []byte(n+`"`)); found {
				name, rest = n, after
				break
			}
		}
		if name == "" {
			return id, "", nil, false
		}
		if len(rest) == 0 {
			return id, name, nil, true
		}
		args, ok = bytes.CutPrefix(rest, []byte(`,"arguments":`))
	} else { // arguments, then name
		if rest, ok = bytes.CutPrefix(rest, []byte(`"arguments":`)); !ok {
			return id, "", nil, false
		}
		for _, n := range names {
			if before, found := bytes.CutSuffix(rest, []byte(`,"name":"`+n+`"`)); found {
				name, args = n, before
				break
			}
		}
		ok = name != ""
	}
	if !ok || len(args) == 0 || isSpace(args[0]) || isSpace(args[len(args)-1]) || !json.Valid(args) {
		return id, "", nil, false
	}
	return id, name, args, true
}

// decodedCall is plainCall of any spelling: keys in any order, space
// between them.
func decodedCall(line []byte, names []string) (id jsonrpc.ID, name string, args json.RawMessage, ok bool) {
	d := json.NewDecoder(bytes.NewReader(line))
	var seen [4]bool
	var params json.RawMessage
	if !delim(d, '{') {
		return id, "", nil, false
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return id, "", nil, false
		}
		var raw json.RawMessage
		if d.Decode(&raw) != nil {
			return id, "", nil, false
		}
		var i int
		switch k {
		case "jsonrpc":
			i, ok = 0, string(raw) == `"2.0"`
		case "id":
			i = 1
			id, ok = plainID(raw)
		case "method":
			i, ok = 2, string(raw) == `"tools/call"`
		case "params":
			i, ok, params = 3, true, raw
		default:
			ok = false
		}
		if !ok || seen[i] {
			return id, "", nil, false
		}
		seen[i] = true
	}
	if !delim(d, '}') || seen != [4]bool{true, true, true, true} {
		return id, "", nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return id, "", nil, false
	}
	name, args, ok = plainParams(params, names)
	return id, name, args, ok
}

// plainParams is params as {"name", "arguments"} naming one of the
// tools named, each at most once, nothing else.
func plainParams(params json.RawMessage, names []string) (name string, args json.RawMessage, ok bool) {
	d := json.NewDecoder(bytes.NewReader(params))
	if !delim(d, '{') {
		return "", nil, false
	}
	var seenArgs bool
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return "", nil, false
		}
		var raw json.RawMessage
		if d.Decode(&raw) != nil {
			return "", nil, false
		}
		switch {
		case k == "name" && name == "":
			if name = offered(raw, names); name == "" {
				return "", nil, false
			}
		case k == "arguments" && !seenArgs:
			seenArgs, args = true, raw
		default:
			return "", nil, false
		}
	}
	if !delim(d, '}') || name == "" {
		return "", nil, false
	}
	return name, args, true
}

// offered is the tool a raw JSON string names, spelt without escapes, if
// it is one of names; else "".
func offered(raw json.RawMessage, names []string) string {
	for _, n := range names {
		if len(raw) == len(n)+2 && raw[0] == '"' && string(raw[1:len(raw)-1]) == n {
			return n
		}
	}
	return ""
}

// plainID is a raw id the go-sdk reads to the same ID: an integer float64
// holds exactly, or a string of printable ASCII with no escape.
func plainID(raw json.RawMessage) (jsonrpc.ID, bool) {
	if len(raw) == 0 {
		return jsonrpc.ID{}, false
	}
	if raw[0] == '"' || raw[len(raw)-1] == '"' {
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
			return jsonrpc.ID{}, false
		}
		for _, b := range raw[1 : len(raw)-1] {
			if b < 0x20 || b > 0x7e || b == '"' || b == '\\' {
				return jsonrpc.ID{}, false
			}
		}
		id, err := jsonrpc.MakeID(string(raw[1 : len(raw)-1]))
		return id, err == nil
	}
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 16 || (digits[0] == '0' && len(digits) > 1) {
		return jsonrpc.ID{}, false
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return jsonrpc.ID{}, false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > maxSafeID || n < -maxSafeID {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(float64(n)) // as the go-sdk makes it
	return id, err == nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func delim(d *json.Decoder, want json.Delim) bool {
	t, err := d.Token()
	return err == nil && t == want
}

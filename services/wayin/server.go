package wayin

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/daycount"
	"lnk.dev/lnk/internal/peercred"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/services/harness/endpoint"
)

// Purpose is the proof's purpose at the way in.
const Purpose = "wayin"

// Limits of the way in.
const (
	// MaxAtOnce is how many messages it hands at once; the next is
	// refused (security.txt: "at most 64 posts at once, as its way in
	// takes messages").
	MaxAtOnce = 64
	// readTimeout bounds how long a caller takes to send its line.
	readTimeout = 10 * time.Second
	// turnLimit bounds how long a taken message's answer is read: a
	// minute past the harness's own limit of the turn, so the harness's
	// ending of it, with its reason, is read first.
	turnLimit = endpoint.OthersTurnLimit + time.Minute
)

// Harness is the agent's harness as the way in reaches it:
// endpoint.Client's SendMessage.
type Harness interface {
	SendMessage(ctx context.Context, m endpoint.Message, onTaken func(), onText func(string)) (int64, error)
}

// Config is what a Server is made of.
type Config struct {
	AgentID, Owner, Name string
	Key                  []byte // the way-in key callers prove they hold
	Harness              Harness
	// Limits is the agent's [tool.scheduler], read at each message.
	Limits func() (caps.SchedulerLimits, error)
	// Dir is the agent's settings folder (~/.lnk/agents/<agent>), where
	// the day's count is kept.
	Dir  *os.File
	Logf func(format string, args ...any)
	Now  func() time.Time
}

// Server is one agent's way in.
type Server struct {
	c     Config
	slots chan struct{}
	ctx   context.Context // ends the answers still being read
	stop  context.CancelFunc

	mu        sync.Mutex
	pending   int // per_day messages being handed now
	subagents int // subagents' turns running
	wg        sync.WaitGroup
}

// New checks c and makes the way in.
func New(c Config) (*Server, error) {
	if c.AgentID == "" || c.Owner == "" || c.Harness == nil || c.Limits == nil || c.Dir == nil {
		return nil, errors.New("wayin: a way in needs an agent ID, an owner, a harness, limits and a folder")
	}
	if _, err := proof.NewChecker(c.Key, proofContext(c)); err != nil {
		return nil, fmt.Errorf("wayin: its key: %w", err)
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Server{c: c, slots: make(chan struct{}, MaxAtOnce), ctx: ctx, stop: stop}, nil
}

func proofContext(c Config) proof.Context {
	return proof.Context{AgentID: c.AgentID, Owner: c.Owner, Purpose: Purpose}
}

// Close ends the answers still being read and waits for them.
func (s *Server) Close() {
	s.stop()
	s.wg.Wait()
}

// Serve takes connections on l until ctx ends.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		uc, ok := c.(*net.UnixConn)
		if !ok {
			c.Close()
			continue
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			s.session(ctx, uc)
		}()
	}
}

// session is one caller: the owner's own process alone (the kernel's
// rule for its clients: the owner's uid, and not a process Link
// confined), then the proof, then the message.
func (s *Server) session(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	if _, err := peercred.OwnersOwn(c); err != nil {
		s.c.Logf("lnk: agent %s's way in: refused a caller: %v", s.c.Name, err)
		return
	}
	c.SetDeadline(time.Now().Add(readTimeout))
	ch := proof.NewChallenge()
	if err := writeLine(c, Hello{Challenge: hex.EncodeToString(ch[:])}); err != nil {
		return
	}
	q, err := ReadRequest(bufio.NewReaderSize(c, 4096))
	if err == nil {
		err = s.checkProof(q, ch)
	}
	if err != nil {
		s.c.Logf("lnk: agent %s's way in: refused a message: %v", s.c.Name, err)
		writeLine(c, Reply{Error: err.Error()})
		return
	}
	c.SetDeadline(time.Time{})
	again, err := s.hand(ctx, q.Message)
	if err != nil {
		r, _ := refusal.Of(err)
		rep := Reply{Error: err.Error()}
		if r != nil {
			rep.Hint = r.Hint
		}
		switch {
		case errors.Is(err, conversation.ErrMissing):
			rep.Rule = conversation.RuleMissing
		case errors.Is(err, refusal.ErrBusy):
			rep.Rule = refusal.RuleBusy
		}
		writeLine(c, rep)
		return
	}
	writeLine(c, Reply{Taken: true, Again: again})
}

// checkProof refuses a request not proved with the agent's way-in key.
func (s *Server) checkProof(q *Request, ch [proof.ChallengeSize]byte) error {
	if q.AgentID != s.c.AgentID {
		return errors.New("the message names another agent than this way in's")
	}
	ans, err := hex.DecodeString(q.Answer)
	if err != nil || !proof.Check(s.c.Key, proofContext(s.c), ch, ans) {
		return errors.New("the message is not proved with the agent's way-in key")
	}
	return nil
}

// Hand is the way in for a message handed in this process (the agent's
// scheduler runner): the same checks and caps as at
// the socket, less the proof. It returns once the harness took the
// message, never waiting for its turn; again says the harness had taken
// it already (a background command's ending, which speaks once).
// Its refusal is its caller's to log (the runner says what it did with
// the job, with the reason), so it is logged once.
func (s *Server) Hand(ctx context.Context, m Message) (again bool, err error) {
	return s.handChecked(ctx, m, false)
}

func (s *Server) hand(ctx context.Context, m Message) (bool, error) {
	return s.handAs(ctx, m, false)
}

// handAs hands m; ending says it is a subagent's answer to the
// conversation that started it, which only the way in itself hands
// (tellParent).
func (s *Server) handAs(ctx context.Context, m Message, ending bool) (bool, error) {
	again, err := s.handChecked(ctx, m, ending)
	if err != nil {
		s.c.Logf("lnk: agent %s's way in: refused a message from %s: %v", s.c.Name, quote(m.From), err)
	}
	return again, err
}

func (s *Server) handChecked(ctx context.Context, m Message, ending bool) (bool, error) {
	select {
	case s.slots <- struct{}{}:
	default:
		return false, &refusal.Refusal{Reason: fmt.Sprintf("the way in is handing %d messages already, the most it takes at once: try again", MaxAtOnce), Rule: refusal.RuleBusy}
	}
	held := true
	release := func() {
		if held {
			held = false
			<-s.slots
		}
	}
	defer release()
	lim, err := s.c.Limits()
	if err != nil {
		return false, fmt.Errorf("the agent's [tool.scheduler] limits can't be read, so nothing is taken: %w", err)
	}
	var k kind
	if ending {
		k, err = kindEnding, checkEnding(m, lim.Hops)
	} else {
		k, err = checkMessage(m, lim.Hops)
	}
	if err != nil {
		return false, err
	}
	counted := k == kindSchedule || k == kindTask
	var day daycount.Count
	s.mu.Lock()
	if counted {
		day, err = DayFile.Today(int(s.c.Dir.Fd()), s.c.Now())
		if err == nil && day.N+s.pending >= lim.PerDay {
			err = &refusal.Refusal{Reason: fmt.Sprintf("%d messages from the agent's schedules and subagents taken today (UTC), the most a day ([tool.scheduler] per_day = %d)", day.N+s.pending, lim.PerDay),
				Rule: caps.ErrPerDay.Rule, Hint: "raise [tool.scheduler] per_day in the agent's Config/sandbox.toml"}
		}
	}
	if err == nil && k == kindTask && s.subagents >= lim.Subagents {
		err = &refusal.Refusal{Reason: fmt.Sprintf("%d subagents are running, the most at once ([tool.scheduler] subagents = %d)", s.subagents, lim.Subagents),
			Hint: "raise [tool.scheduler] subagents in the agent's Config/sandbox.toml, or wait for one to end"}
	}
	if err == nil {
		if counted {
			s.pending++
		}
		if k == kindTask {
			s.subagents++
		}
	}
	s.mu.Unlock()
	if err != nil {
		if k == kindTask {
			s.tellParent(m, "", err, false)
		}
		return false, err
	}
	taskDone := func() {
		if k == kindTask {
			s.mu.Lock()
			s.subagents--
			s.mu.Unlock()
		}
	}
	taken, res := make(chan struct{}), make(chan error, 1)
	tctx, cancel := context.WithTimeout(s.ctx, turnLimit)
	stopOnCaller := context.AfterFunc(ctx, cancel) // the caller leaving before it's taken ends it
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		em := endpoint.Message{Thread: m.Thread, Text: m.Text, From: m.From, Hops: m.Hops}
		var answer *answerText
		if m.Task != nil {
			em.Subagent = &endpoint.Subagent{Tools: m.Task.Tools, Model: m.Task.Model}
			answer = &answerText{}
		}
		var onText func(string)
		if answer != nil {
			onText = answer.add
		}
		took := false
		_, err := s.c.Harness.SendMessage(tctx, em,
			func() { took = true; stopOnCaller(); close(taken) }, onText)
		taskDone()
		switch {
		case answer != nil && took:
			s.tellParent(m, answer.String(), err, true)
		case answer != nil && refusal.Final(err) && !endpoint.IsAlreadyTaken(err):
			// The harness refused the start before taking it (its 403
			// or 404): the scheduler ends it and never hands it again,
			// so the parent is told now, once. One not taken for now
			// (busy, not answering) is handed again, and told then.
			s.tellParent(m, "", err, false)
		}
		res <- err
	}()
	var out error
	again := false
	select {
	case <-taken:
	case err := <-res:
		switch {
		case err == nil:
		case endpoint.IsAlreadyTaken(err):
			again = true
		case errors.Is(err, conversation.ErrMissing):
			// The conversation was deleted (or never was): a refusal its
			// caller acts on (a job into it is removed), naming the command
			// that starts it.
			out = &refusal.Refusal{Reason: "the agent's harness did not take the message: " + err.Error(), Rule: conversation.RuleMissing,
				Hint: "lnk agent send " + s.c.Name + " --new --thread " + m.Thread + " MESSAGE starts the conversation again", Err: err}
		default:
			out = fmt.Errorf("the agent's harness did not take the message: %w", err)
		}
	}
	if counted {
		s.mu.Lock()
		s.pending--
		if out == nil && !again {
			day, err := DayFile.Today(int(s.c.Dir.Fd()), s.c.Now())
			if err == nil {
				day.N++
				err = DayFile.Write(int(s.c.Dir.Fd()), day)
			}
			if err != nil {
				s.c.Logf("lnk: agent %s's way in: the day's count could not be kept: %v", s.c.Name, err)
			}
		}
		s.mu.Unlock()
	}
	return again, out
}

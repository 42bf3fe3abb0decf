package webhook

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"lnk.dev/lnk/helpers/keybroker/webhookcheck"
)

// checkers are the listener's lnk-webhook processes, each a webhook's
// own: started at its webhook's first post and kept (a second only while
// the first is busy, up to perHook), so that each is only ever handed
// that webhook's own secrets. At most max run; starting one more stops
// the one idle longest.
type checkers struct {
	path string
	max  int
	logf func(string, ...any)

	mu     sync.Mutex
	byHook map[string]*checker
	closed bool
}

func newCheckers(path string, max int, logf func(string, ...any)) *checkers {
	return &checkers{path: path, max: max, logf: logf, byHook: map[string]*checker{}}
}

// errNoChecker is a post no lnk-webhook could be started for.
var errNoChecker = errors.New("too many webhooks are being checked at once")

// perHook is how many lnk-webhook processes one webhook's posts may be
// checked by at once: a burst of its posts is checked on every core.
var perHook = max(runtime.NumCPU(), 2)

// slot is the key of a webhook's i-th checker.
func slot(hook string, i int) string { return hook + "/" + strconv.Itoa(i) }

// get is a running checker of hook's: an idle one, else a new one while
// it has fewer than perHook, else the least busy.
func (cs *checkers) get(hook string) (*checker, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return nil, errors.New("the listener is stopping")
	}
	var leastBusy *checker
	least, free := -1, -1
	for i := range perHook {
		c := cs.byHook[slot(hook, i)]
		if c == nil || c.ended() {
			delete(cs.byHook, slot(hook, i))
			if free < 0 {
				free = i
			}
			continue
		}
		n := c.load()
		if n == 0 {
			return c, nil
		}
		if least < 0 || n < least {
			leastBusy, least = c, n
		}
	}
	if free < 0 || (len(cs.byHook) >= cs.max && !cs.stopIdlest()) {
		if leastBusy != nil {
			return leastBusy, nil
		}
		return nil, errNoChecker
	}
	c, err := startChecker(cs.path, slot(hook, free), cs.logf)
	if err != nil {
		return nil, err
	}
	cs.byHook[slot(hook, free)] = c
	return c, nil
}

// stopIdlest stops the checker idle longest, reporting whether there was
// one (cs.mu held).
func (cs *checkers) stopIdlest() bool {
	var idlest *checker
	var idlestSince time.Time
	for h, c := range cs.byHook {
		if c.ended() {
			delete(cs.byHook, h)
			return true
		}
		if since, idle := c.idleSince(); idle && (idlest == nil || since.Before(idlestSince)) {
			idlest, idlestSince = c, since
		}
	}
	if idlest == nil {
		return false
	}
	delete(cs.byHook, idlest.hook)
	idlest.stop(errors.New("stopped for another webhook's"))
	return true
}

// close stops every checker.
func (cs *checkers) close() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	for h, c := range cs.byHook {
		c.stop(errors.New("the listener stopped"))
		delete(cs.byHook, h)
	}
}

// checker is one running lnk-webhook: checks written to its stdin, each
// numbered, and its verdicts routed back by their number.
type checker struct {
	hook string
	cmd  *exec.Cmd
	logf func(string, ...any)

	wmu sync.Mutex // one frame at a time on in
	in  *os.File

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan webhookcheck.Verdict
	last    time.Time // when it was last handed or answered a check
	err     error     // why it ended; nil while it runs
	done    chan struct{}
}

// startChecker starts lnk-webhook at path for hook: an empty
// environment, no argument but its name, pipes for its stdin and stdout.
func startChecker(path, hook string, logf func(string, ...any)) (*checker, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(path)
	cmd.Env = []string{}
	cmd.Stdin, cmd.Stdout = inR, outW
	errOut := &lineLog{logf: logf, prefix: "webhook: lnk-webhook: "}
	cmd.Stderr = errOut
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("lnk-webhook: %w", err)
	}
	c := &checker{hook: hook, cmd: cmd, logf: logf, in: inW, waiting: map[uint64]chan webhookcheck.Verdict{},
		last: time.Now(), done: make(chan struct{})}
	go c.read(outR)
	return c, nil
}

// read routes each verdict to its check; anything else, or the end of
// its output, ends the checker.
func (c *checker) read(out *os.File) {
	defer out.Close()
	vr := webhookcheck.NewVerdictReader(out)
	for {
		seq, v, err := vr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("lnk-webhook ended")
			}
			c.stop(err)
			return
		}
		c.mu.Lock()
		ch, ok := c.waiting[seq]
		delete(c.waiting, seq)
		c.last = time.Now()
		c.mu.Unlock()
		if !ok {
			c.stop(fmt.Errorf("lnk-webhook answered check %d, which it was not handed or which was answered", seq))
			return
		}
		ch <- v
	}
}

// stop ends the checker for why: its process killed and every check
// waiting on it refused.
func (c *checker) stop(why error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = why
	c.waiting = nil
	close(c.done)
	c.mu.Unlock()
	c.in.Close()
	c.cmd.Process.Kill()
	go c.cmd.Wait()
}

func (c *checker) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// load is how many checks wait on c.
func (c *checker) load() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiting)
}

// idleSince is when c was last used, and whether no check waits on it.
func (c *checker) idleSince() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.err == nil && len(c.waiting) == 0
}

// check hands req, with s, to the checker and waits for its verdict
// until timeout. A check not written or not answered in time stops the
// checker: one that hangs is not trusted with the next post.
func (c *checker) check(s webhookcheck.Secrets, req webhookcheck.Request, timeout time.Duration) (webhookcheck.Verdict, error) {
	ch := make(chan webhookcheck.Verdict, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return webhookcheck.Verdict{}, err
	}
	c.next++
	seq := c.next
	c.waiting[seq] = ch
	c.last = time.Now()
	c.mu.Unlock()

	deadline := time.Now().Add(timeout)
	c.wmu.Lock()
	err := c.in.SetWriteDeadline(deadline)
	if err == nil {
		err = webhookcheck.WriteFrame(c.in, seq, s, req)
	}
	c.wmu.Unlock()
	if errors.Is(err, webhookcheck.ErrHeadersTooLong) {
		c.mu.Lock()
		delete(c.waiting, seq)
		c.mu.Unlock()
		return webhookcheck.Verdict{Status: webhookcheck.StatusBadRequest, Reason: err.Error()}, nil
	}
	if err != nil {
		err = fmt.Errorf("handing lnk-webhook the post: %w", err)
		c.stop(err)
		return webhookcheck.Verdict{}, err
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case v := <-ch:
		return v, nil
	case <-c.done:
		select { // answered just before it ended
		case v := <-ch:
			return v, nil
		default:
		}
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return webhookcheck.Verdict{}, err
	case <-t.C:
		err := errors.New("lnk-webhook did not answer in time")
		c.stop(err)
		return webhookcheck.Verdict{}, err
	}
}

// lineLog logs what lnk-webhook says on stderr, a line at a time, at
// most 4 KiB of it.
type lineLog struct {
	mu     sync.Mutex
	logf   func(string, ...any)
	prefix string
	n      int
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n < 4096 {
		s := string(p[:min(len(p), 4096-l.n)])
		l.n += len(s)
		for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
			l.logf("%s%q", l.prefix, line)
		}
	}
	return len(p), nil
}

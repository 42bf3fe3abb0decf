package agentlife

import (
	"context"
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

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/cloexec"
	"lnk.dev/lnk/internal/procstat"
)

// Config is what Supervise runs.
type Config struct {
	Home  string
	Agent string // its name
	Lnk   string // the lnk program: the harness starts through its `sandbox run --agent`
	Mode  string // ModeForeground, ModeBackground or ModeUnit
	// Stderr is where the supervisor says what it does (each line also
	// goes to the log); nil: the log only.
	Stderr io.Writer
	// Started, if set, is called after each start of the harness, with
	// the record just written.
	Started func(Record)
}

// Restart backoff: the first wait, the longest, and how long a harness
// must have run for the next failure to wait the first again.
const (
	firstBackoff = time.Second
	maxBackoff   = time.Minute
	resetAfter   = time.Minute
	// stopGrace is how long a stop waits after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
)

// Supervise runs agent cfg.Agent's harness until ctx ends (lnk agent
// stop's SIGTERM) or the harness exits 0, starting it again after each
// failure. It holds the agent's lock throughout: ErrRunning when another
// supervisor has it. A first start that can't be made (ports taken, the
// sandbox off where the machine refuses it, a log that isn't a file) is
// returned; a later one is logged and tried again after the backoff.
func Supervise(ctx context.Context, cfg Config) error {
	// PR_SET_PDEATHSIG is sent when the thread that started the child
	// ends: every start comes from this thread, kept as long as this call.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// What the supervisor's own starter left open never reaches the
	// harness, which gets exactly its output's pipe.
	if err := cloexec.MarkInherited(); err != nil {
		return fmt.Errorf("marking inherited descriptors close-on-exec: %w", err)
	}
	a, err := caps.LoadAgent(cfg.Home, cfg.Agent)
	if err != nil {
		return err
	}
	sd, err := stateDir(cfg.Home, a.ID)
	if err != nil {
		return err
	}
	defer sd.Close()
	lock, err := takeLock(int(sd.Fd()), LockFile)
	if errors.Is(err, ErrRunning) {
		return fmt.Errorf("%w: agent %s's supervisor holds ~/.lnk/agents/%s/%s", ErrRunning, a.Name, a.ID, LockFile)
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	s := &supervisor{cfg: cfg, dirfd: int(sd.Fd()), id: a.ID}
	if err := s.begin(); err != nil {
		return err
	}
	if a.RunsLinkHarness() {
		stop, err := s.openWayIn(ctx, a)
		if err != nil {
			s.rec.State, s.rec.LastExit = StateStopped, oneLine(err.Error())
			s.write()
			return err
		}
		defer stop()
	}
	backoff := firstBackoff
	for first := true; ; first = false {
		h, err := s.start(first)
		if err != nil {
			s.rec.LastExit = oneLine(err.Error())
			if first {
				s.rec.State = StateStopped
				s.write()
				return err
			}
			s.say("lnk: the harness did not start again: %s", s.rec.LastExit)
		} else {
			res := h.wait(ctx)
			s.rec.LastExit = res.how
			if ctx.Err() != nil {
				s.rec.State = StateStopped
				s.say("lnk: agent %s stopped", cfg.Agent)
				return s.write()
			}
			if res.ok {
				s.rec.State = StateStopped
				s.say("lnk: the harness exited 0; agent %s stopped", cfg.Agent)
				return s.write()
			}
			if time.Since(s.rec.Since) >= resetAfter {
				backoff = firstBackoff
			}
			s.say("lnk: the harness %s; starting it again in %s", res.how, backoff)
		}
		s.rec.State = StateRestarting
		if err := s.write(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			s.rec.State = StateStopped
			return s.write()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// supervisor is one Supervise's state.
type supervisor struct {
	cfg   Config
	dirfd int // ~/.lnk/agents/<agent id>
	id    string
	rec   Record
	// mu guards cur, the last start's log: the supervisor's own lines go
	// through it while its harness's output is copied (until it is
	// closed), so one writer rotates the log and keeps its start's
	// record; else through appendLine.
	mu  sync.Mutex
	cur *rotLog
}

// begin writes the first record, after sweeping what a supervisor
// killed before this one left of its harness's group.
func (s *supervisor) begin() error {
	me, err := procstat.Read(os.Getpid())
	if err != nil {
		return err
	}
	boot, err := procstat.BootID()
	if err != nil {
		return err
	}
	if old, err := ReadRecord(s.cfg.Home, s.id); err == nil && old != nil && old.Boot == boot && old.HarnessPID > 0 {
		if _, err := sweepGroup(old.HarnessPID, old.HarnessStart); err != nil {
			return fmt.Errorf("sweeping what the last supervisor left: %w", err)
		}
	}
	s.rec = Record{Agent: s.cfg.Agent, ID: s.id, Mode: s.cfg.Mode, PID: os.Getpid(), PIDStart: me.Start, Boot: boot, State: StateStarting}
	return s.write()
}

func (s *supervisor) write() error { return writeRecord(s.dirfd, &s.rec) }

// warn says line on Stderr alone: the log's own failure.
func (s *supervisor) warn(line string) {
	if s.cfg.Stderr != nil {
		io.WriteString(s.cfg.Stderr, line+"\n")
	}
}

// say writes a line of the supervisor's to the log and to Stderr.
func (s *supervisor) say(format string, args ...any) {
	line := fmt.Sprintf(format, args...) + "\n"
	if s.cfg.Stderr != nil {
		io.WriteString(s.cfg.Stderr, line)
	}
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur != nil && cur.WriteOpen([]byte(line)) {
		return
	}
	if a, err := caps.LoadAgent(s.cfg.Home, s.cfg.Agent); err == nil {
		appendLine(s.cfg.Home, s.cfg.Agent, LogName(a), line, s.warn)
	}
}

// harness is one started harness.
type harness struct {
	cmd    *exec.Cmd
	pgid   int
	out    *os.File      // the reading end of its output's pipe
	copied chan struct{} // closed once its output is all in the log
	carry  *carrier      // Link Harness's port on the machine's loopback (carry.go); nil for another harness
	hooks  *hookListener // its webhook listener (webhooks.go); nil without webhooks
}

// copyGrace bounds how long, once the harness's group is killed, its
// output is still copied: a process that left the group (sandbox off)
// may hold the pipe open for ever.
const copyGrace = 2 * time.Second

// dupFile is a second descriptor of f (O_CLOEXEC), closed on its own.
func dupFile(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// start readies and starts the harness once: the agent read again (its
// settings as they are now), the machine's word on a sandbox off, its
// block of ports free, the log opened and the start's offset recorded.
func (s *supervisor) start(first bool) (*harness, error) {
	a, err := caps.LoadAgent(s.cfg.Home, s.cfg.Agent)
	if err != nil {
		return nil, err
	}
	if a.ID != s.id {
		return nil, fmt.Errorf("agent %s's ID changed from %s to %s", a.Name, s.id, a.ID)
	}
	if err := a.CheckStart(); err != nil {
		return nil, err
	}
	off, err := a.SandboxOff(s.cfg.Home)
	if err != nil {
		return nil, err
	}
	ports, err := EnsurePorts(s.cfg.Home, a.Name)
	if err != nil {
		return nil, err
	}
	if err := CheckPortsFree(a.Name, ports); err != nil {
		return nil, err
	}
	log, err := openLog(s.cfg.Home, a.Name, LogName(a), s.warn)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cur = log
	s.mu.Unlock()
	copying := false // then the copy closes the log once the output ends
	defer func() {
		if !copying {
			log.Close()
		}
	}()
	if off {
		s.say("%s", NoSandboxWarning(a.Name))
	}
	var argv []string
	switch {
	case a.RunsLinkHarness() && off:
		return nil, fmt.Errorf("agent %s runs Link Harness, which runs only in its sandbox (lnk agent start --sandbox %s turns it back on)", a.Name, a.Name)
	case a.RunsLinkHarness():
		if argv, err = linkHarnessArgv(s.cfg.Home, s.cfg.Lnk, a, ports); err != nil {
			return nil, err
		}
	case off:
		argv = a.Start.Command
	default:
		argv = append([]string{s.cfg.Lnk, "sandbox", "run", "--agent", a.Name, "--"}, a.Start.Command...)
	}
	hookPort, err := webhookPort(s.cfg.Home, a)
	if err != nil {
		return nil, err
	}
	// The harness writes a pipe the supervisor copies to the log: never
	// the log's own descriptor, through which it could truncate it.
	out, in, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer in.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = harnessEnv(os.Environ(), ports)
	cmd.Dir = (caps.Layout{Home: s.cfg.Home}).FilesDir(a.Name)
	cmd.Stdout, cmd.Stderr = in, in
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true, Pdeathsig: unix.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting the harness %s: %w", argv[0], err)
	}
	h := &harness{cmd: cmd, pgid: cmd.Process.Pid, out: out, copied: make(chan struct{})}
	if a.RunsLinkHarness() {
		if h.carry, err = carryPort(s.cfg.Home, a, ports.First); err != nil {
			h.kill()
			return nil, err
		}
	}
	if hookPort != 0 {
		hookOut, err := dupFile(in)
		if err != nil {
			h.kill()
			return nil, err
		}
		h.hooks = startHooks(s.cfg.Lnk, a.Name, h.pgid, hookOut)
	}
	copying = true
	go func() {
		defer close(h.copied)
		defer log.Close()
		io.Copy(log, out) // log's Write never fails: the output is never held up
	}()
	st, err := procstat.Read(h.pgid) // not reaped before wait: the pid is still its
	if err != nil {
		h.kill()
		return nil, fmt.Errorf("reading the harness's start: %w", err)
	}
	s.rec.State, s.rec.Sandbox, s.rec.Ports = StateRunning, !off, ports
	s.rec.HarnessPID, s.rec.HarnessStart = h.pgid, st.Start
	s.rec.Since, s.rec.Starts = time.Now().UTC(), s.rec.Starts+1
	s.rec.Log = log.Path()
	s.rec.WebhookPort = hookPort
	if err := s.write(); err != nil {
		h.kill()
		return nil, err
	}
	if s.cfg.Started != nil {
		s.cfg.Started(s.rec)
	}
	return h, nil
}

// NoSandboxWarning is said at every start of an agent with its sandbox
// off, on stderr and in its log.
func NoSandboxWarning(agent string) string {
	return "lnk: warning: agent " + agent + " runs WITHOUT its sandbox: its harness may do whatever your user may (lnk agent start --sandbox " + agent + " turns it back on)"
}

// harnessEnv is env with LNK_PORT set to the block's first port (taken
// out when there is no block).
func harnessEnv(env []string, b *caps.PortBlock) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "LNK_PORT=") {
			out = append(out, kv)
		}
	}
	if b != nil {
		out = append(out, "LNK_PORT="+strconv.Itoa(b.First))
	}
	return out
}

// result is how a harness ended.
type result struct {
	ok  bool
	how string
}

// wait waits for the harness to end, or ends it when ctx does. Either
// way its whole group is killed before its leader is reaped, so the
// group's ID can name no other process meanwhile.
func (h *harness) wait(ctx context.Context) result {
	exited := make(chan struct{})
	go func() {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, h.pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		close(exited)
	}()
	select {
	case <-exited:
		h.hooks.end()
	case <-ctx.Done():
		h.hooks.end()
		unix.Kill(-h.pgid, unix.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopGrace):
		}
	}
	unix.Kill(-h.pgid, unix.SIGKILL)
	<-exited
	h.carry.close()
	h.cmd.Wait()
	h.drain()
	ps := h.cmd.ProcessState
	if ps == nil {
		return result{how: "ended unseen"}
	}
	if ws, ok := ps.Sys().(unix.WaitStatus); ok && ws.Signaled() {
		return result{how: "was killed by " + ws.Signal().String()}
	}
	return result{ok: ps.ExitCode() == 0, how: "exited " + strconv.Itoa(ps.ExitCode())}
}

// kill ends a harness that started but can't be kept.
func (h *harness) kill() {
	h.hooks.end()
	unix.Kill(-h.pgid, unix.SIGKILL)
	h.carry.close()
	h.cmd.Wait()
	h.drain()
}

// drain waits for the harness's output to reach the log, at most
// copyGrace, then closes the pipe.
func (h *harness) drain() {
	select {
	case <-h.copied:
	case <-time.After(copyGrace):
	}
	h.out.Close()
}

func oneLine(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ") }

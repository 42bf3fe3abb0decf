package runtool

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/procstat"
	"lnk.dev/lnk/internal/resolve"
)

// readyWait bounds how long a start waits for its supervisor to say the
// sandbox started.
const readyWait = 60 * time.Second

// ErrNoSuch is a background command the asking conversation did not
// start (or none at all: the answer is the same).
var ErrNoSuch = errors.New("no such background command in this conversation")

// Start starts c in the background for conversation thread, under a
// supervisor of its own: supervisor is the command that becomes one
// (`lnk-run-tool supervise`), handed the record's lock (taken), the
// output file and the working folder as descriptors 3, 4 and 5, and a
// pipe on 6 to say the sandbox started.
//
// hops is the starting call's (its _meta's, the harness's word): the
// ending is a message one hop further.
func (a *Agent) Start(thread string, hops int, c Call, supervisor []string) (*Record, error) {
	if err := checkThread(thread); err != nil {
		return nil, &Refusal{Reason: err.Error(), Hint: "the harness names each call's conversation in _meta"}
	}
	comp, err := a.grants()
	if err != nil {
		return nil, err
	}
	lim := comp.Limits.Run
	if err := checkEndingGoes(thread, hops, comp.Limits.Scheduler.Hops); err != nil {
		return nil, err
	}
	if err := checkCommand(c.Argv, comp.Commands); err != nil {
		return nil, &Refusal{Reason: err.Error(), Hint: "lnk agent allow " + a.Name + " --command " + c.Argv[0]}
	}
	dir, err := a.openFolder(c.Folder)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	s, err := a.openStore()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	all, err := s.lockAll()
	if err != nil {
		return nil, err
	}
	defer all.Close()
	_, running, err := a.sweep(s, lim.BackgroundKeep)
	if err != nil {
		return nil, err
	}
	if running >= lim.Background {
		return nil, &Refusal{Reason: fmt.Sprintf("%d background commands run already, the most at once ([tool.run] background = %d)", running, lim.Background),
			Hint: "stop one with run__stop, or raise [tool.run] background in the agent's Config/sandbox.toml"}
	}
	now := time.Now().UTC()
	day, err := startsFile.Today(s.fd(), now)
	if err != nil {
		return nil, err
	}
	if day.N >= lim.BackgroundPerDay {
		return nil, &Refusal{Reason: fmt.Sprintf("%d background commands started today (UTC), the most a day ([tool.run] background_per_day = %d)", day.N, lim.BackgroundPerDay),
			Hint: "raise [tool.run] background_per_day in the agent's Config/sandbox.toml"}
	}
	id := newID()
	out, err := a.createOutput(id)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	lock, ok, err := s.lock(id, false)
	if err != nil || !ok {
		return nil, fmt.Errorf("taking %s's lock: %v", id, err)
	}
	defer lock.Close() // the supervisor holds its own copy from here
	boot, err := procstat.BootID()
	if err != nil {
		return nil, err
	}
	r := &Record{ID: id, Thread: thread, Hops: max(hops, 0), Argv: c.Argv, Folder: c.Folder, State: StateStarting, Started: now, Boot: boot, Timeout: lim.BackgroundTimeout.String()}
	if err := s.write(r); err != nil {
		return nil, err
	}
	day.N++
	if err := startsFile.Write(s.fd(), day); err != nil {
		return nil, err
	}
	if err := a.spawnSupervisor(supervisor, id, lock, out, dir); err != nil {
		// The lock is ours again once the supervisor is gone: the
		// record is ended here, never left starting.
		r.State, r.Reason, r.Error, r.Ended, r.Code = StateEnded, EndFailed, err.Error(), time.Now().UTC(), -1
		s.writeEnding(r)
		s.write(r)
		return nil, err
	}
	return s.read(id)
}

// checkEndingGoes refuses a start whose ending, a message from run:<id>
// into thread one hop past the start, the agent's way in would refuse
// (services/wayin): past the agent's hop cap, or into a stranger's
// conversation (internal/conversation's rule), where no message from the
// agent's own commands goes. Such an ending would never be told, and be
// handed again at every delivery; refused at its start, as the
// scheduler refuses a job past the cap, nothing runs without a way back.
func checkEndingGoes(thread string, hops, maxHops int) error {
	if conversation.Strangers(thread) {
		return &Refusal{Reason: fmt.Sprintf("the call's conversation %q is a stranger's conversation: a background command's ending never goes there, so none is started", thread)}
	}
	if hops+1 > maxHops {
		return &Refusal{Reason: fmt.Sprintf("this turn is at hop %d: a background command's ending would be hop %d, past the agent's cap ([tool.scheduler] hops = %d), so none is started", hops, hops+1, maxHops),
			Hint: "raise [tool.scheduler] hops in the agent's Config/sandbox.toml"}
	}
	return nil
}

func newID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("runtool: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// createOutput makes Home/background/<id>.out, new (O_EXCL), through no
// link: the background folder made and opened from the files folder's
// handle, the file opened by one name beneath it.
func (a *Agent) createOutput(id string) (*os.File, error) {
	home, err := resolve.OpenRoot(a.FilesDir())
	if err != nil {
		return nil, fmt.Errorf("the agent's files folder: %w", err)
	}
	defer home.Close()
	if err := home.MkdirAll("background", 0o700); err != nil {
		return nil, fmt.Errorf("background/ in the files folder: %w", err)
	}
	bg, err := home.OpenDir("background")
	if err != nil {
		return nil, fmt.Errorf("background/ in the files folder: %w", err)
	}
	defer bg.Close()
	fd, err := ownerfile.Open(bg.Fd(), id+".out", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("background/%s.out: %w", id, err)
	}
	return os.NewFile(uintptr(fd), id+".out"), nil
}

// spawnSupervisor starts the supervisor in a session of its own and
// waits for its word: "ok" once the sandbox runs and its record says so,
// or why not.
func (a *Agent) spawnSupervisor(argv []string, id string, lock, out *os.File, dir *resolve.Root) error {
	rd, wr, err := os.Pipe()
	if err != nil {
		return err
	}
	defer rd.Close()
	dfd, err := unix.FcntlInt(uintptr(dir.Fd()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	dirf := os.NewFile(uintptr(dfd), "folder")
	defer dirf.Close()
	cmd := &exec.Cmd{Path: argv[0], Args: append(append([]string(nil), argv...), "--agent", a.Name, "--id", id),
		Env: a.childEnv(), ExtraFiles: []*os.File{lock, out, dirf, wr}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	wr.Close()
	if err != nil {
		return fmt.Errorf("starting the supervisor: %w", err)
	}
	go cmd.Wait() // reaped whenever it ends; it outlives no call's answer it owes
	rd.SetReadDeadline(time.Now().Add(readyWait))
	word, _ := bufio.NewReader(io.LimitReader(rd, 4096)).ReadString('\n')
	if msg := strings.TrimSpace(word); msg != "ok" {
		if msg == "" {
			msg = "the supervisor ended without starting the sandbox"
		}
		cmd.Process.Kill()
		return errors.New(msg)
	}
	return nil
}

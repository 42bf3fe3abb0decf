package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// procsVerdict forks, one at a time, as many children as the bound (arg)
// allows the whole sandbox, each waiting on a pipe and doing nothing
// else: Open if every fork worked (this process, its threads and the
// children are then past the bound); Closed if a fork was refused with
// EAGAIN before; Broken on any other failure. Every child is ended and
// reaped before it returns.
func procsVerdict(arg string) (string, string) {
	bound, err := strconv.Atoi(arg)
	if err != nil || bound < 1 {
		return Broken, "no bound in " + strconv.Quote(arg)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return Broken, err.Error()
	}
	forked := 0
	var ferr unix.Errno
	for forked < bound {
		if ferr = forkWaiter(p[0], p[1]); ferr != 0 {
			break
		}
		forked++
	}
	unix.Close(p[1]) // each child reads end of file, and exits
	unix.Close(p[0])
	for n := 0; n < forked; n++ {
		if _, err := unix.Wait4(-1, nil, 0, nil); err != nil && !errors.Is(err, unix.EINTR) {
			break
		}
	}
	switch {
	case ferr == 0:
		return Open, strconv.Itoa(forked) + " processes forked, past the bound"
	case ferr == unix.EAGAIN:
		return Closed, "fork refused (EAGAIN) after " + strconv.Itoa(forked)
	}
	return Broken, "fork failed after " + strconv.Itoa(forked) + ": " + ferr.Error()
}

// forkWaiter forks a child that closes its copy of the pipe's write end
// w, blocks reading its read end r until every write end is closed, then
// exits: between the fork and its exit it makes raw system calls only,
// as a child of a multi-threaded Go process must.
func forkWaiter(r, w int) unix.Errno {
	pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	if pid == 0 {
		var b [1]byte
		unix.RawSyscall(unix.SYS_CLOSE, uintptr(w), 0, 0)
		unix.RawSyscall(unix.SYS_READ, uintptr(r), uintptr(unsafePointer(&b[0])), 1)
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	return 0
}

// tasksVerdict starts, in a child (this program again, as `lnk sandbox
// probe` with the one probe "threads"), as many threads as the bound
// (arg) allows the whole sandbox: a thread is a task as a process is,
// held by the same bound, and far cheaper to start than a fork of this
// process. Open if the child started them all; Closed if the kernel
// refused one with EAGAIN (which ends a Go program: its runtime says
// "failed to create new OS thread" and the errno); Broken otherwise.
func tasksVerdict(arg string) (string, string) {
	spec, err := json.Marshal(Spec{Probes: []Probe{{Name: "threads", Kind: "threads", Arg: arg, Expect: Closed}}})
	if err != nil {
		return Broken, err.Error()
	}
	// The child's output goes to a file, read once it has ended: while it
	// holds every task the bound allows, this process must start no
	// thread of its own (a goroutine copying a pipe would want one, and
	// the Go runtime dies when it cannot have it).
	f, err := os.CreateTemp("", ".lnk-probe-tasks-")
	if err != nil {
		return Broken, err.Error()
	}
	defer f.Close()
	os.Remove(f.Name())
	// Nor may the runtime want one for itself: waiting on the child in a
	// system call hands its P to another thread, and the scavenger wakes
	// one. It takes an idle thread where it has one, so idle threads are
	// made now, before the child holds every task.
	idleThreads(idleBeforeTasks)
	cmd := exec.Command("/proc/self/exe", "sandbox", "probe")
	cmd.Stdin = bytes.NewReader(spec)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "GOTRACEBACK=none") // refused, it says why in a line, not 4,096 goroutines' stacks
	err = cmd.Run()
	out, rerr := io.ReadAll(io.NewSectionReader(f, 0, 1<<20))
	if rerr != nil {
		return Broken, rerr.Error()
	}
	var rs []Result
	switch {
	case err == nil && json.Unmarshal(out, &rs) == nil && len(rs) == 1:
		return rs[0].Got, rs[0].Detail
	case bytes.Contains(out, []byte("failed to create new OS thread")) && bytes.Contains(out, []byte("errno=11")):
		line, _, _ := strings.Cut(string(out), "\n")
		return Closed, strings.TrimPrefix(line, "runtime: ")
	}
	return Broken, fmt.Sprintf("the child neither started them nor was refused: %v: %.300s", err, out)
}

// threadsVerdict starts arg threads, each blocked reading a pipe until
// this process ends; only a refusal of one ends it first (see
// tasksVerdict).
func threadsVerdict(arg string) (string, string) {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 {
		return Broken, "no bound in " + strconv.Quote(arg)
	}
	debug.SetMaxThreads(n + 100)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return Broken, err.Error()
	}
	var started sync.WaitGroup
	for range n {
		started.Add(1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread is this goroutine's until the process ends
			started.Done()
			var b [1]byte
			unix.Read(p[0], b[:])
		}()
		started.Wait()
	}
	return Open, strconv.Itoa(n) + " threads started, past the bound"
}

// idleBeforeTasks is how many idle threads tasksVerdict makes before its
// child holds every task: more than the runtime starts while it waits.
const idleBeforeTasks = 8

// idleThreads has n goroutines each hold a thread of its own at once,
// then let it go: the runtime keeps each thread, idle, for its next use,
// so it starts none while there are enough.
func idleThreads(n int) {
	var held, release sync.WaitGroup
	var done sync.WaitGroup
	release.Add(1)
	for range n {
		held.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			held.Done()
			release.Wait()
			runtime.UnlockOSThread() // a goroutine ending locked would end its thread
		}()
	}
	held.Wait()
	release.Done()
	done.Wait()
}

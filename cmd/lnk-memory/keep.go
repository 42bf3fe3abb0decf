package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"lnk.dev/lnk/services/memory/embed"
)

// modelRetry is how often a model server that ended is started again
// while the service runs (security.txt "Memory": every 30 s).
const modelRetry = embed.Retry

// keep is lnk-memory keep SERVE-ARGS…, what connect starts in a session
// of its own: outside every sandbox, as the owner, it serves the
// service's embedding model and runs the service beside it. Where Link's
// own program (lnk, beside this one) is on the machine, it makes a
// socket listening on a free port of 127.0.0.1 before the service
// starts and holds it until it ends, serves Link's built-in model on it
// (lnk model builtin --listen-fd 3 --no-record, the socket inherited as
// fd 3) and gives the service alone that address in $LNK_MEMORY_MODEL,
// which its landlock domain then lets it reach and nothing else. The
// port is bound from before the service starts to after it ends, so no
// other program, of this user or another, can bind it and be sent the
// chunks' text for embedding: not before the first model server, not
// between one that ended and the next. A model server that ends is
// started again on the same socket every 30 s while the service runs
// (connections meanwhile wait in its backlog, bounded by the service's
// waits),
// the service searching by words until it answers (embed.Client). With
// no lnk here the service runs without a model: words alone. When the
// service ends the model is stopped; SIGTERM and SIGINT go on to the
// service.
func keep(serveArgs []string) error {
	// Both children's parent-death signal is this thread's end.
	runtime.LockOSThread()
	env := []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}
	lnk, err := modelProgram()
	if err != nil {
		fmt.Fprintf(os.Stderr, "lnk-memory: no model for memory (%v): search by words alone\n", err)
	}
	var model *modelServer
	if lnk != "" {
		sock, port, err := modelSocket()
		if err != nil {
			return fmt.Errorf("the memory model's socket: %w", err)
		}
		// Held open until keep ends: the port is never free between two
		// model servers.
		defer sock.Close()
		model = &modelServer{lnk: lnk, sock: sock, env: env}
		model.start()
		defer model.stop()
		env = append(env, embed.Env+"=127.0.0.1:"+strconv.Itoa(port))
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	svc := &exec.Cmd{Path: "/proc/self/exe", Args: append([]string{"lnk-memory", "serve"}, serveArgs...), Dir: "/", Env: env,
		Stdin: devnull, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}}
	if err := svc.Start(); err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- svc.Wait() }()
	for {
		var ended <-chan error
		if model != nil {
			ended = model.ended
		}
		select {
		case err := <-done:
			return err
		case s := <-sigs:
			svc.Process.Signal(s)
		case err := <-ended:
			fmt.Fprintf(os.Stderr, "lnk-memory: the memory model ended (%v): started again in %s\n", err, modelRetry)
			model.ended = nil
			model.retry = time.After(modelRetry)
		case <-model.retryC():
			model.retry = nil
			model.start()
		}
	}
}

// modelServer is Link's built-in model served for the memory service on
// one listening socket made before the service starts.
type modelServer struct {
	lnk   string
	sock  *os.File // listening on 127.0.0.1, handed to each server as fd 3
	env   []string
	cmd   *exec.Cmd
	ended chan error
	retry <-chan time.Time
}

// start runs the model server; its end is sent on ended. Called from
// keep's locked thread only.
func (m *modelServer) start() {
	m.cmd = &exec.Cmd{Path: m.lnk, Args: []string{"lnk", "model", "builtin", "--listen-fd", "3", "--no-record"}, Dir: "/", Env: m.env,
		ExtraFiles:  []*os.File{m.sock},
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}}
	ended := make(chan error, 1)
	m.ended = ended
	if err := m.cmd.Start(); err != nil {
		ended <- err
		return
	}
	cmd := m.cmd
	go func() { ended <- cmd.Wait() }()
}

func (m *modelServer) retryC() <-chan time.Time {
	if m == nil {
		return nil
	}
	return m.retry
}

// stop ends the model server, if it runs, and waits for it.
func (m *modelServer) stop() {
	if m.cmd == nil || m.cmd.Process == nil || m.ended == nil {
		return
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	<-m.ended
}

// modelProgram is Link's own program, lnk, in the folder this program
// is in (as installed: ~/.lnk/bin, or a build's bin/): a regular file,
// not a link, that only its owner (this user or root) can change. ""
// and why where there is none.
func modelProgram() (string, error) {
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(self), "lnk")
	st, err := os.Lstat(p)
	if err != nil {
		return "", err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", p)
	case st.Mode().Perm()&0o022 != 0:
		return "", fmt.Errorf("%s can be changed by others than its owner", p)
	case st.Mode().Perm()&0o100 == 0:
		return "", fmt.Errorf("%s is not executable", p)
	case sys == nil || (int(sys.Uid) != os.Getuid() && sys.Uid != 0):
		return "", fmt.Errorf("%s is neither yours nor root's", p)
	}
	return p, nil
}

// modelSocket is a TCP socket listening on a free port of 127.0.0.1
// (close-on-exec; handed to a model server only through ExtraFiles),
// and its port.
func modelSocket() (*os.File, int, error) {
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, 0, err
	}
	defer l.Close() // the copy below holds the socket
	a, ok := l.Addr().(*net.TCPAddr)
	if !ok || a.Port == 0 {
		return nil, 0, errors.New("no port")
	}
	f, err := l.File()
	if err != nil {
		return nil, 0, err
	}
	return f, a.Port, nil
}

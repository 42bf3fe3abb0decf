package hub

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"lnk.dev/lnk/services/toolbridge/launch"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// serverProc is the one server: its own process group, in a PID
// namespace of its own where the kernel allows one (so when the hub dies,
// the kernel kills the server and everything it started). What the hub
// writes to it is written apart from what reads it (by the sessions'
// goroutines, and a writer of its own for what the reader answers), so a
// server that writes while reading nothing never stalls the hub's reader.
type serverProc struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     io.Reader
	queue   chan []byte
	done    chan struct{} // closed once it has exited and been waited for
	once    sync.Once
	writeMu sync.Mutex
	how     string
}

// startServer starts def's command in /, with the definition's
// environment alone, its stderr to the hub's log.
func startServer(def *tooldef.Definition, log io.Writer) (*serverProc, error) {
	env := def.Environ()
	var p *serverProc
	var err error
	for _, ns := range []bool{true, false} {
		p, err = tryStart(def, env, log, ns)
		if err == nil {
			break
		}
	}
	clear(env)
	return p, err
}

func tryStart(def *tooldef.Definition, env []string, log io.Writer, pidNS bool) (*serverProc, error) {
	cmd, err := launch.Command(def, env)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = log
	how := "in a process group of its own"
	if pidNS {
		how = "in a PID namespace of its own"
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
		if os.Getuid() != 0 {
			// Unprivileged: a user namespace mapping the user to itself
			// alone, so the server runs as the user it would anyway.
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
			cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
			cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
			cmd.SysProcAttr.GidMappingsEnableSetgroups = false
		}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", def.Command[0], err)
	}
	p := &serverProc{cmd: cmd, in: in, out: out, queue: make(chan []byte, 256), done: make(chan struct{}), how: how}
	go p.writeLoop()
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// InPIDNamespace reports whether the server runs in a PID namespace.
func (p *serverProc) inPIDNamespace() bool { return strings.Contains(p.how, "namespace") }

func (p *serverProc) writeLoop() {
	for {
		select {
		case b := <-p.queue:
			p.send(b)
		case <-p.done:
			return
		}
	}
}

// send writes a session's line to the server on that session's own
// goroutine (one at a time): a server that reads nothing holds up the
// sessions writing to it, never the hub's reader.
func (p *serverProc) send(b []byte) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	select {
	case <-p.done:
		return
	default:
	}
	if _, err := p.in.Write(append(b[:len(b):len(b)], '\n')); err != nil {
		go p.stop()
	}
}

// answer queues a line the hub's reader writes (a ping's answer, a
// refusal) for the server's own writer, so the reader never waits on the
// server's input; it is dropped if the queue is full or the server ended.
func (p *serverProc) answer(b []byte) {
	select {
	case p.queue <- b:
	default:
	}
}

// stop kills the server's whole process group, never only closing its
// input, and waits for it.
func (p *serverProc) stop() {
	p.once.Do(func() {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	})
	<-p.done
	p.in.Close()
}

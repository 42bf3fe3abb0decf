package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/memory/service"
)

// connect is memory-<agent id>'s server as its harness's proxy starts it
// (services/owntools): a session on the agent's owner's one memory
// service, relayed between stdin/stdout and the service's socket. Where
// no service listens it starts one (lnk-memory serve, in a session of
// its own so the tool's end does not end it, beside its model: keep) for
// every sandboxed agent of that owner here, then names the agent as the
// session opens. The agent
// must be sandboxed: memory serves no other.
func connect(name string) error {
	home := os.Getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return errors.New("no HOME: the memory tool finds the agent under it")
	}
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		return err
	}
	if a.NoSandbox {
		return fmt.Errorf("agent %s runs without its sandbox, and Link Memory serves only sandboxed agents\nhint: lnk agent start %s --sandbox", name, name)
	}
	if err := service.CheckOwner(a.Owner); err != nil {
		return fmt.Errorf("agent %s's owner: %w", name, err)
	}
	all, err := caps.ListAgents(home)
	if err != nil {
		return err
	}
	var serve []string
	for _, o := range all {
		if o.Owner == a.Owner && !o.NoSandbox && o.ID != "" {
			serve = append(serve, o.ID+"="+o.Name)
		}
	}
	sort.Strings(serve)
	sock := filepath.Join(home, "Link", "Agents", ".memory", a.Owner, "run", service.SocketName)
	start := func() error {
		args := []string{"keep", "--owner", a.Owner}
		for _, s := range serve {
			args = append(args, "--agent", s)
		}
		devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer devnull.Close()
		cmd := &exec.Cmd{Path: "/proc/self/exe", Args: append([]string{"lnk-memory"}, args...), Dir: "/",
			Env:   []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")},
			Stdin: devnull, Stdout: devnull, Stderr: devnull,
			SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
		if err := cmd.Start(); err != nil {
			return err
		}
		// Not waited for: it outlives this session, and is reaped by init.
		return cmd.Process.Release()
	}
	// A service started before this agent was made holds no sandbox for
	// it: asked, it retires (its open sessions go on), and the session
	// below starts one for every agent of the owner as they are now.
	if err := service.Need(context.Background(), sock, a.ID); err != nil {
		return err
	}
	c, err := service.Dial(context.Background(), sock, a.ID, start)
	if err != nil {
		return err
	}
	return relay(c, os.Stdin, os.Stdout)
}

// relay carries in to c and c to out until c ends. A service that refuses
// the session answers one line, "refused: …", before any MCP message
// (which starts with '{'): that line is this tool's error, not the
// harness's to parse.
func relay(c net.Conn, in io.Reader, out io.Writer) error {
	defer c.Close()
	go func() {
		io.Copy(c, in)
		if uc, ok := c.(*net.UnixConn); ok {
			uc.CloseWrite()
		}
	}()
	r := bufio.NewReader(c)
	first, err := r.Peek(1)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	if first[0] == 'r' {
		line, _ := r.ReadString('\n')
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, "is not served here") {
			// A service started before this agent was made serves the
			// agents of that moment alone (its landlock domain is fixed).
			line += "\nhint: lnk agent memory stop ends the owner's service; the next session starts it for every agent"
		}
		return errors.New(line)
	}
	_, err = io.Copy(out, r)
	return err
}

// Package client is how the lnk CLI and services reach the owner's
// kernel: [Connect] to a running one, or [Dial] to start one on demand.
//
// # Security
//
// It holds one connection to the kernel. It reaches the socket through
// ~/.lnk and ~/.lnk/run opened without following a link and checked to be
// the owner's, mode 0700, and connects through that held folder
// (/proc/self/fd/N/kernel.sock), so no path an attacker swaps is walked.
// It trusts the kernel only after SO_PEERCRED says the listener is this
// uid. A kernel it starts gets the caller's environment and no fd beyond
// 0–2: stdin and stdout are /dev/null, stderr a memfd read only if the
// kernel exits before it listens.
package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// ErrNotRunning says no kernel listens for this owner.
var ErrNotRunning = errors.New("no kernel is running for this user")

// Client is a connection to the kernel.
type Client struct {
	*wire.Client
}

// Connect connects to the kernel of the owner whose HOME is home.
func Connect(home string) (*Client, error) {
	h, err := os.OpenFile(home, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open HOME: %w", err)
	}
	defer h.Close()
	lnk, err := ownerdir.OpenRoot(h, ".lnk", false, true)
	if errors.Is(err, unix.ENOENT) {
		return nil, ErrNotRunning
	}
	if err != nil {
		return nil, err
	}
	defer lnk.Close()
	run, err := ownerdir.OpenRoot(lnk, "run", false, true)
	if errors.Is(err, unix.ENOENT) {
		return nil, ErrNotRunning
	}
	if err != nil {
		return nil, err
	}
	defer run.Close()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	path := "/proc/self/fd/" + strconv.Itoa(int(run.Fd())) + "/" + proto.SocketName
	for {
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ECONNREFUSED) {
			return nil, ErrNotRunning
		}
		return nil, fmt.Errorf("connect to the kernel: %w", err)
	}
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil || int(cred.Uid) != os.Geteuid() {
		unix.Close(fd)
		return nil, fmt.Errorf("the kernel's socket is not this user's")
	}
	wc, err := wire.NewClient(os.NewFile(uintptr(fd), proto.SocketName))
	if err != nil {
		return nil, err
	}
	return &Client{wc}, nil
}

// Dial connects to the owner's kernel, starting one (lnk kernel run, from
// lnkPath, or this program when it is empty) when none listens.
func Dial(ctx context.Context, home, lnkPath string) (*Client, error) {
	c, err := Connect(home)
	if !errors.Is(err, ErrNotRunning) {
		return c, err
	}
	if lnkPath == "" {
		if lnkPath, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	exited, stderr, err := startKernel(home, lnkPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	deadline := time.Now().Add(15 * time.Second)
	delay := time.Millisecond
	for {
		c, err := Connect(home)
		if !errors.Is(err, ErrNotRunning) {
			return c, err
		}
		select {
		case <-exited:
			// It may have lost the race to another kernel starting at
			// the same time: then wait for that one to listen.
			if c, err := Connect(home); err == nil {
				return c, nil
			}
			why := firstLine(stderr)
			if !strings.Contains(why, proto.ErrRunning.Error()) {
				return nil, fmt.Errorf("the kernel did not start: %s", why)
			}
			exited = nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the kernel did not listen within 15 s")
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// startKernel starts `lnk kernel` in a session of its own. exited is
// closed if it ends; stderr is the memfd its stderr goes to.
func startKernel(home, lnkPath string) (<-chan struct{}, *os.File, error) {
	mfd, err := unix.MemfdCreate("lnk-kernel-stderr", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, err
	}
	stderr := os.NewFile(uintptr(mfd), "stderr")
	null, err := os.Open(os.DevNull)
	if err != nil {
		stderr.Close()
		return nil, nil, err
	}
	defer null.Close()
	env := append(os.Environ(), "HOME="+home)
	p, err := os.StartProcess(lnkPath, []string{filepath.Base(lnkPath), "kernel", "run"}, &os.ProcAttr{
		Dir:   "/",
		Env:   env,
		Files: []*os.File{null, null, stderr},
		Sys:   &unixSysProcAttr,
	})
	if err != nil {
		stderr.Close()
		return nil, nil, fmt.Errorf("start the kernel: %w", err)
	}
	exited := make(chan struct{})
	go func() { p.Wait(); close(exited) }()
	return exited, stderr, nil
}

// firstLine is what the kernel said before it exited: the first line of
// its stderr ("lnk: why"), without the prefix; hints follow it.
func firstLine(f *os.File) string {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	s := strings.TrimSpace(string(b[:n]))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimPrefix(s, "lnk: ")
	if s == "" {
		return "it exited without a word"
	}
	return s
}

// Ping makes a no-op round trip.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.Call(ctx, proto.Ping, &proto.Empty{}, &proto.Empty{})
	return err
}

// Status asks the kernel what it holds.
func (c *Client) Status(ctx context.Context) (*proto.StatusReply, error) {
	var r proto.StatusReply
	_, err := c.Call(ctx, proto.Status, &proto.Empty{}, &r)
	return &r, err
}

// Stop asks the kernel to stop; it answers before it does.
func (c *Client) Stop(ctx context.Context) error {
	_, err := c.Call(ctx, proto.Stop, &proto.Empty{}, &proto.Empty{})
	return err
}

// Start turns an agent's granted folders into capabilities of a new start.
func (c *Client) Start(ctx context.Context, req *proto.StartRequest) (*proto.StartReply, error) {
	var r proto.StartReply
	_, err := c.Call(ctx, proto.Start, req, &r)
	return &r, err
}

// End revokes every capability of an agent's start.
func (c *Client) End(ctx context.Context, agent string, start uint64) (int, error) {
	r, err := c.EndStart(ctx, agent, start)
	return r.Revoked, err
}

// EndStart is End with the kernel's whole reply: Ended says why when
// the kernel had ended the start itself.
func (c *Client) EndStart(ctx context.Context, agent string, start uint64) (*proto.EndReply, error) {
	var r proto.EndReply
	_, err := c.Call(ctx, proto.End, &proto.EndRequest{Agent: agent, Start: start}, &r)
	return &r, err
}

// OpenFolder asks for the handle of one folder capability of a start
// this connection made: an O_PATH|O_DIRECTORY fd of the folder the
// kernel opened and checked, the caller's to close.
func (c *Client) OpenFolder(ctx context.Context, start uint64, handle string) (*proto.CapInfo, *os.File, error) {
	var r proto.CapInfo
	files, err := c.Call(ctx, proto.OpenFolder, &proto.OpenFolderRequest{Start: start, Handle: handle}, &r)
	if err != nil {
		return nil, nil, err
	}
	return &r, files[0], nil
}

// Attach hands the kernel the pidfd of a start's sandbox (it stays the
// caller's): the kernel lists its pid, and kills it when the start ends.
func (c *Client) Attach(ctx context.Context, start uint64, pidfd *os.File) error {
	_, err := c.Call(ctx, proto.Attach, &proto.StartRef{Start: start}, &proto.Empty{}, pidfd)
	return err
}

// Watch waits for the kernel to end a start this connection made and
// returns why; an error when the kernel stops or the connection ends.
func (c *Client) Watch(ctx context.Context, start uint64) (string, error) {
	var r proto.WatchReply
	_, err := c.Call(ctx, proto.Watch, &proto.StartRef{Start: start}, &r)
	return r.Reason, err
}

// EndAgent ends every start of agent: their sandboxes killed, their
// capabilities revoked.
func (c *Client) EndAgent(ctx context.Context, agent string) (*proto.EndAgentReply, error) {
	var r proto.EndAgentReply
	_, err := c.Call(ctx, proto.EndAgent, &proto.EndAgentRequest{Agent: agent}, &r)
	return &r, err
}

// Package fs is the client of lnk-fsbroker: callers write
// c.Read(ctx, "home", "a/b.txt") and get the file's bytes, or the
// resolver's refusal as the same sentinel the broker saw (errors.Is(err,
// resolve.ErrLink)). [Start] starts a broker and hands it its folders.
//
// # Security
//
// Holds: one channel to one broker, and the root fds only until the
// hello has carried them over. May: ask the broker; read the fds it hands
// back (an open file, a listing's memfd). Trusts: the broker for what a
// name holds, not for sizes (reads are capped on the bytes read) nor for
// the shape of its replies (decoded strictly, fd counts checked by
// internal/wire). A dead broker gives every waiting call an error
// wrapping wire.ErrClosed, never a hang.
package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/fsbroker"
	"lnk.dev/lnk/internal/brokerproc"
	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
)

// Client talks to one broker; it is safe for concurrent use.
type Client struct{ w *wire.Client }

// Root is a folder handed to the broker in its hello.
type Root struct {
	Name  string
	Dir   *os.File // O_PATH|O_DIRECTORY; stays the caller's
	Write bool
}

// OpenDir opens path as a root folder handle (O_PATH|O_DIRECTORY|
// O_NOFOLLOW|O_CLOEXEC): a path whose last component is a link is
// refused.
func OpenDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening folder %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Start starts the broker binary bin, hands it roots, and returns the
// client once the broker has confined itself. log gets its stderr (nil
// discards it). The caller kills the process ([brokerproc.Proc.Kill])
// and closes the client.
func Start(ctx context.Context, bin string, roots []Root, log io.Writer) (*Client, *brokerproc.Proc, error) {
	p, err := brokerproc.Start(brokerproc.Options{Path: bin, Log: log})
	if err != nil {
		return nil, nil, err
	}
	c, err := New(p.Chan)
	if err == nil {
		_, err = c.Hello(ctx, roots)
		if err != nil {
			c.Close()
		}
	}
	if err != nil {
		p.Kill()
		return nil, nil, err
	}
	return c, p, nil
}

// New wraps a channel to a broker (it becomes the client's).
func New(ch *os.File) (*Client, error) {
	w, err := wire.NewClient(ch)
	if err != nil {
		return nil, err
	}
	return &Client{w: w}, nil
}

// Close closes the channel; the broker exits when it sees it close.
func (c *Client) Close() error { return c.w.Close() }

// Done is closed when the channel dies (the broker exited or broke the
// protocol).
func (c *Client) Done() <-chan struct{} { return c.w.Done() }

// Hello hands the broker its roots, first and once.
func (c *Client) Hello(ctx context.Context, roots []Root) (fsbroker.HelloReply, error) {
	var h fsbroker.Hello
	files := make([]*os.File, len(roots))
	for i, r := range roots {
		h.Roots = append(h.Roots, fsbroker.HelloRoot{Name: r.Name, Write: r.Write})
		files[i] = r.Dir
	}
	var rep fsbroker.HelloReply
	_, err := c.w.Call(ctx, fsbroker.SpecHello, &h, &rep, files...)
	if err != nil {
		return rep, fmt.Errorf("fsbroker hello: %w", err)
	}
	return rep, nil
}

// call makes one request and turns a refusal back into its sentinel.
func (c *Client) call(ctx context.Context, spec wire.Spec, op, path string, req, resp any, files ...*os.File) ([]*os.File, error) {
	out, err := c.w.Call(ctx, spec, req, resp, files...)
	if err != nil {
		return nil, callErr(op, path, err)
	}
	return out, nil
}

func callErr(op, path string, err error) error {
	var we *wire.Error
	if errors.As(err, &we) {
		if k := fsbroker.FromWire(we.Code); k != nil {
			return &resolve.Error{Op: op, Path: path, Kind: k}
		}
	}
	return fmt.Errorf("fsbroker %s %q: %w", op, path, err)
}

// Open opens the regular file name beneath root for reading; the fd
// comes from the broker, the data never passes through it. max > 0
// refuses a larger file (by fstat at open).
func (c *Client) Open(ctx context.Context, root, name string, max int64) (*os.File, resolve.Version, error) {
	fd, v, err := c.OpenFd(ctx, root, name, max)
	if err != nil {
		return nil, v, err
	}
	return os.NewFile(uintptr(fd), name), v, nil
}

// OpenFd is [Client.Open] returning the bare descriptor, the caller's to
// close: O_RDONLY|O_CLOEXEC, and O_NONBLOCK, which a regular file
// ignores. It saves the two system calls an *os.File costs (fcntl, and
// epoll_ctl for a non-blocking fd) and, in the common case, every
// allocation but one.
func (c *Client) OpenFd(ctx context.Context, root, name string, max int64) (int, resolve.Version, error) {
	var buf [256]byte
	q := fsbroker.OpenReq{Root: root, Path: name, Max: max}
	body, ok := q.AppendWire(buf[:0])
	if !ok {
		var err error
		if body, err = wire.Marshal(&fsbroker.OpenReq{Root: root, Path: name, Max: max}); err != nil {
			return -1, resolve.Version{}, fmt.Errorf("fsbroker open %q: %w", name, err)
		}
	}
	o := opened{fd: -1}
	if err := c.w.CallRaw(ctx, fsbroker.SpecOpen, body, nil, o.take); err != nil {
		return -1, resolve.Version{}, callErr("open", name, err)
	}
	return o.fd, o.v, nil
}

// opened takes an open's reply as the wire reads it.
type opened struct {
	fd int
	v  resolve.Version
}

func (o *opened) take(r wire.Record, fds []int) error {
	if r.Kind == wire.KindError {
		return wire.DecodeError(fsbroker.SpecOpen, r.Body)
	}
	var err error
	if ver, _, ok := fsbroker.DecodeOpenReply(r.Body); ok {
		if o.v, err = resolve.ParseVersionBytes(ver); err != nil {
			err = fmt.Errorf("the broker's version %q: %v", ver, err)
		}
	} else {
		rep := new(fsbroker.OpenReply) // the strict decoder decides
		if err = wire.Unmarshal(r.Body, rep); err == nil {
			if o.v, err = resolve.ParseVersion(rep.Version); err != nil {
				err = fmt.Errorf("the broker's version %q: %v", rep.Version, err)
			}
		}
	}
	if err != nil {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return fmt.Errorf("malformed reply: %v", err)
	}
	o.fd = fds[0]
	return nil
}

// DefaultMaxRead caps [Client.Read].
const DefaultMaxRead = 64 << 20

// Read reads the regular file name beneath root whole, up to
// DefaultMaxRead bytes (counted on the bytes read: a growing file never
// passes it).
func (c *Client) Read(ctx context.Context, root, name string) ([]byte, error) {
	b, _, err := c.ReadFile(ctx, root, name, DefaultMaxRead)
	return b, err
}

// ReadFile reads name whole with its version, refusing it past max bytes.
func (c *Client) ReadFile(ctx context.Context, root, name string, max int64) ([]byte, resolve.Version, error) {
	fd, v, err := c.OpenFd(ctx, root, name, max)
	if err != nil {
		return nil, v, err
	}
	defer unix.Close(fd)
	b, err := resolve.ReadCapped(fd, v.Size, max, name)
	if err != nil {
		return nil, v, err
	}
	return b, v, nil
}

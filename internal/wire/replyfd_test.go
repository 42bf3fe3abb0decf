package wire

import (
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A handler's bare fd (Request.ReplyFD) travels beside the reply and is
// closed by the server once sent; one too many is refused as a handler
// error and closed too, and a failing handler's fd is closed, never sent.
func TestReplyFD(t *testing.T) {
	specRaw := Spec{Type: 1, Name: "raw", ReplyFDs: 1, States: AnyState}
	specTwo := Spec{Type: 2, Name: "two", ReplyFDs: 1, States: AnyState}
	specBad := Spec{Type: 3, Name: "bad", ReplyFDs: 1, States: AnyState}
	opened := make(chan int, 8)
	open := func(t testing.TB) int {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		opened <- fd
		return fd
	}
	routes := Table(
		Handle(specRaw, func(ctx context.Context, r *Request, q *empty) (*empty, []*os.File, error) {
			r.ReplyFD(open(t))
			return &empty{}, nil, nil
		}),
		Handle(specTwo, func(ctx context.Context, r *Request, q *empty) (*empty, []*os.File, error) {
			r.ReplyFD(open(t))
			f, err := os.Open("/dev/null")
			if err != nil {
				return nil, nil, err
			}
			return &empty{}, []*os.File{f}, nil
		}),
		Handle(specBad, func(ctx context.Context, r *Request, q *empty) (*empty, []*os.File, error) {
			r.ReplyFD(open(t))
			return nil, nil, Errorf("nope", "refused")
		}),
	)
	cl, _ := newTestClient(t, routes)
	ctx := context.Background()
	files, err := cl.Call(ctx, specRaw, &empty{}, &empty{})
	if err != nil || len(files) != 1 {
		t.Fatalf("raw: %d files, %v", len(files), err)
	}
	var st, null unix.Stat_t
	if err := unix.Fstat(int(files[0].Fd()), &st); err != nil || unix.Stat("/dev/null", &null) != nil || st.Rdev != null.Rdev {
		t.Fatalf("the fd that came is not /dev/null: %v", err)
	}
	CloseFiles(files)
	for _, spec := range []Spec{specTwo, specBad} {
		if files, err := cl.Call(ctx, spec, &empty{}, &empty{}); err == nil {
			CloseFiles(files)
			t.Fatalf("%s: succeeded", spec.Name)
		}
	}
	// Every fd the handlers made is closed by the server (it may close a
	// sent one just after the reply has come, so wait for it).
	for range 3 {
		fd := <-opened
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == unix.EBADF {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("handler fd %d still open 10 s after its reply", fd)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

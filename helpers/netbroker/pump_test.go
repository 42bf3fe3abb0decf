package netbroker

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// A transfer larger than both pump buffers crosses the tunnel intact
// both ways, and the log counts every byte.
func TestTunnelCarriesLargeTransferIntact(t *testing.T) {
	echo := echoServer(t, "127.0.0.1:0")
	port := portOf(t, echo)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port}}, nil)
	resp, _, c, br := tp.ask(t, fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port))
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	want := make([]byte, 3<<20+17)
	rand.Read(want)
	sent := make(chan error, 1)
	go func() {
		_, err := c.Write(want)
		c.(interface{ CloseWrite() error }).CloseWrite()
		sent <- err
	}()
	got, err := io.ReadAll(br)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("echoed %d of %d bytes intact=%v, %v", len(got), len(want), bytes.Equal(got, want), err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	ev := tp.log.waitFor(t, func(e Event) bool { return e.Decision == "allow" })
	if ev.Up != int64(len(want)) || ev.Down != int64(len(want)) {
		t.Fatalf("logged up %d down %d, want %d each", ev.Up, ev.Down, len(want))
	}
}

type failingWriter struct{ left int }

var errWrite = errors.New("write failed")

func (w *failingWriter) Write(b []byte) (int, error) {
	if len(b) > w.left {
		n := w.left
		w.left = 0
		return n, errWrite
	}
	w.left -= len(b)
	return len(b), nil
}

type shortWriter struct{}

func (shortWriter) Write(b []byte) (int, error) { return len(b) / 2, nil }

func TestPump(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), (largePump*3)/16+5)
	errRead := errors.New("read failed")
	for _, tc := range []struct {
		name  string
		dst   io.Writer
		src   io.Reader
		wantN int64
		err   error
	}{
		{"to EOF", io.Discard, bytes.NewReader(data), int64(len(data)), nil},
		{"one byte at a time", io.Discard, iotest.OneByteReader(bytes.NewReader(data[:1000])), 1000, nil},
		{"read error after data", io.Discard, io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(errRead)), 100, errRead},
		{"write error counts what was written", &failingWriter{left: smallPump + 10}, bytes.NewReader(data), smallPump + 10, errWrite},
		{"short write", shortWriter{}, bytes.NewReader(data[:10]), 5, io.ErrShortWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := pump(tc.dst, tc.src)
			if n != tc.wantN || !errors.Is(err, tc.err) {
				t.Fatalf("pump: %d, %v; want %d, %v", n, err, tc.wantN, tc.err)
			}
		})
	}
}

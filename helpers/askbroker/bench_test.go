package askbroker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal's two ends: master (what the owner's
// terminal emulator reads) and the terminal itself.
func openPTY(tb testing.TB) (master, tty *os.File) {
	tb.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		tb.Fatal(err)
	}
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	master, tty = os.NewFile(uintptr(m), "ptmx"), os.NewFile(uintptr(s), "pts")
	tb.Cleanup(func() { master.Close(); tty.Close() })
	return master, tty
}

// prompts reads the terminal's output and sends each question id it asks.
func prompts(master *os.File) chan string {
	c := make(chan string, 16)
	re := regexp.MustCompile(`\[lnk question ([a-z2-7]{16})\][^\[]*to allow it once`)
	go func() {
		var buf []byte
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			if err != nil {
				close(c)
				return
			}
			buf = append(buf, b[:n]...)
			for {
				loc := re.FindSubmatchIndex(buf)
				if loc == nil {
					break
				}
				c <- string(buf[loc[2]:loc[3]])
				buf = buf[loc[1]:]
			}
		}
	}()
	return c
}

func p50(ds []time.Duration) float64 {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return float64(ds[len(ds)/2].Nanoseconds())
}

// BenchmarkQuestionReachesStoreAndTerminal times a question from Ask
// until it is in the store and its prompt has reached the owner's
// terminal (p50), beside the bare work: writing the same record to a
// file and the same text to the terminal.
func BenchmarkQuestionReachesStoreAndTerminal(b *testing.B) {
	home := b.TempDir()
	s, err := OpenStore(home)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	master, tty := openPTY(b)
	term, err := NewTerminal(tty)
	if err != nil {
		b.Fatal(err)
	}
	defer term.Close()
	br, err := New(Config{Store: s, Terminal: term, Wait: time.Minute, Limits: Limits{PerMinute: 1 << 30, PauseAfter: 1 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	asked := prompts(master)
	q := sampleQuestion()
	link := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		done := make(chan struct{})
		go func() { br.Ask(context.Background(), q); close(done) }()
		id := <-asked
		link = append(link, time.Since(start))
		if _, err := s.Read(id); err != nil {
			b.Fatalf("the question is not in the store: %v", err)
		}
		if err := s.Answer(id, Answer{Allow: true, By: "store"}); err != nil {
			b.Fatal(err)
		}
		<-done
	}
	// The baseline: the same record to a file, the same text to the terminal.
	base := make([]time.Duration, 0, b.N)
	rec, _ := json.Marshal(Waiting{ID: "aaaaaaaaaaaaaaaa", Question: *q})
	text := []byte(fmt.Sprintf("\r\n[lnk question %s]\r\n%s\r\nType abcd to allow it once; ", "aaaaaaaaaaaaaaaa", bytes.ReplaceAll([]byte(q.Text()), []byte("\n"), []byte("\r\n"))))
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := os.WriteFile(filepath.Join(dir, "q"), rec, 0o600); err != nil {
			b.Fatal(err)
		}
		tty.Write(text)
		<-asked
		base = append(base, time.Since(start))
	}
	l, bs := p50(link), p50(base)
	b.ReportMetric(l, "link-ns/op")
	b.ReportMetric(bs, "base-ns/op")
	b.ReportMetric(l/bs, "x-baseline")
}

package askbroker

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A watcher wakes whoever waits for an answer file with inotify on the
// store's folder. It is only a wake-up: the answer file itself is the
// truth, and waiters look again every second whatever inotify says.
type watcher struct {
	f *os.File

	mu      sync.Mutex
	waiters map[string][]chan struct{} // by question id
}

func (s *Store) watcher() (*watcher, error) {
	s.watchOnce.Do(func() {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			s.watchErr = fmt.Errorf("inotify: %w", err)
			return
		}
		if _, err := unix.InotifyAddWatch(fd, fmt.Sprintf("/proc/self/fd/%d", s.fd), unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR); err != nil {
			unix.Close(fd)
			s.watchErr = fmt.Errorf("inotify on the store: %w", err)
			return
		}
		w := &watcher{f: os.NewFile(uintptr(fd), "inotify"), waiters: map[string][]chan struct{}{}}
		go w.run()
		s.watch = w
	})
	return s.watch, s.watchErr
}

func (w *watcher) close() { w.f.Close() }

func (w *watcher) run() {
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			w.wakeAll()
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				w.wakeAll()
				continue
			}
			if id, ok := strings.CutSuffix(name, ".a"); ok {
				w.wake(id)
			}
		}
	}
}

func (w *watcher) subscribe(id string) chan struct{} {
	c := make(chan struct{}, 1)
	w.mu.Lock()
	w.waiters[id] = append(w.waiters[id], c)
	w.mu.Unlock()
	return c
}

func (w *watcher) unsubscribe(id string, c chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cs := w.waiters[id]
	for i := range cs {
		if cs[i] == c {
			cs = append(cs[:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(w.waiters, id)
	} else {
		w.waiters[id] = cs
	}
}

func (w *watcher) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.waiters[id] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

func (w *watcher) wakeAll() {
	w.mu.Lock()
	ids := make([]string, 0, len(w.waiters))
	for id := range w.waiters {
		ids = append(ids, id)
	}
	w.mu.Unlock()
	for _, id := range ids {
		w.wake(id)
	}
}

// Wait returns question id's answer once there is one, or ctx's error.
func (s *Store) Wait(ctx context.Context, id string) (Answer, error) {
	var wake chan struct{}
	if w, err := s.watcher(); err == nil {
		wake = w.subscribe(id)
		defer w.unsubscribe(id, wake)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if a, ok, err := s.ReadAnswer(id); err != nil || ok {
			return a, err
		}
		select {
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		case <-wake:
		case <-tick.C:
		}
	}
}

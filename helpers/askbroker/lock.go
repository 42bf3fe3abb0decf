package askbroker

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

const lockName = ".answering"

var probeMu sync.Mutex

func (s *Store) openLock() (int, error) {
	fd, err := ownerfile.Open(s.fd, lockName, unix.O_CREAT|unix.O_RDWR, 0o600)
	if errors.Is(err, ownerfile.ErrLink) {
		return -1, fmt.Errorf("%s %w", lockName, ErrLink)
	}
	if err != nil {
		return -1, fmt.Errorf("opening the store's lock: %w", err)
	}
	if err := checkPrivate(fd, lockName, unix.S_IFREG); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// Answering holds a shared lock in the store for as long as a terminal or
// a chat answers waiting questions; a question waits in the store only
// while one does. Call release when it stops.
func (s *Store) Answering() (release func(), err error) {
	fd, err := s.openLock()
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("locking the store: %w", err)
	}
	var once sync.Once
	return func() { once.Do(func() { unix.Close(fd) }) }, nil
}

// SomeoneAnswering reports whether anyone holds [Store.Answering]'s lock.
func (s *Store) SomeoneAnswering() bool {
	probeMu.Lock()
	defer probeMu.Unlock()
	fd, err := s.openLock()
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return err == unix.EWOULDBLOCK
	}
	unix.Flock(fd, unix.LOCK_UN)
	return false
}
